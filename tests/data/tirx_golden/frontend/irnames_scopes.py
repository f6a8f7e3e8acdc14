# Registered scopes and effect kinds as TIRx's users spell them: T.MemoryScope(...) where a
# scope string goes, T.ThreadScope ranks and T.CallEffectKind members as Python ints.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), T.int32), S: T.Tensor((8,), T.int32, scope=T.MemoryScope("shared"))):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    A[0] = 1
    B = T.alloc_tensor(ty_args=[T.Tensor((4,), T.int32, scope=T.MemoryScope("shared"))])
    B[0] = A[5]
    A[1] = T.ThreadScope.get("cuda.cta").rank
    A[2] = T.CallEffectKind.Pure
    A[3] = T.CallEffectKind.UpdateState + A[4]
