# A function returning one of its tensor parameters (`-> T.Tensor((n,), ...)`, `return B`), its
# shape symbol a scalar parameter the other parameters share.
from __future__ import annotations

from tirx.script import tirx as T


@T.function
def f(
    n: T.int32,
    A: T.Tensor((n,), "float32"),  # noqa: F821
    B: T.Tensor((n,), "float32"),  # noqa: F821
) -> T.Tensor((n,), "float32"):  # noqa: F821
    return B
