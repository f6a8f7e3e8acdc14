# A Python number beside a value of another dtype: its own dtype first (int32 / int64 / float32 /
# bool), then TIRx's dtype matching (float16 + 1.0 computes in float32, int8 + 1 in int32,
# float64 + 1 casts the 1); bitwise ops take the other operand's dtype; T.if_then_else keeps each
# literal arm's dtype. Every combination: tests/test_tirx_literals.py.
from tirx.script import tirx as T


@T.function
def f(H: T.Tensor((8,), T.float16), G: T.Tensor((8,), T.bfloat16), D: T.Tensor((8,), T.float64),
      B: T.Tensor((8,), T.int8), U: T.Tensor((8,), T.uint32), F: T.Tensor((8,), T.float32),
      C: T.Tensor((8,), T.bool), L: T.Tensor((8,), T.int64)):  # fmt: skip
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    H[0] = H[1] + 1.0
    H[2] = H[3] * 0.1 + 2
    G[0] = G[1] + 1
    G[2] = G[3] - 0.5
    D[0] = D[1] + 1
    D[2] = D[3] * 0.1
    B[0] = B[1] + 1
    B[2] = B[3] & 7
    B[4] = B[5] * 2.5
    U[0] = U[1] + (-1)
    U[1] = U[2] + 2147483648
    U[3] = (U[4] >> 3) | True
    F[0] = F[1] + True
    F[1] = T.if_then_else(C[0], B[6], 2.5)
    F[2] = T.max(H[4], 0.25)
    F[3] = T.min(B[7], -3)
    H[5] = T.if_then_else(C[1], H[6], 0.1)
    L[0] = L[1] * 3 + 2147483648
    C[2] = H[7] < 1
    C[3] = B[0] == True  # noqa: E712
