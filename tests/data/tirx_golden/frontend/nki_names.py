"""TIRx's NKI (Trainium) instructions: they load, build, print and round-trip as TIRx writes
them (defaults filled in, literals with their own dtype), though tirx compiles none of them
(corpus: TIRx's namespace round-trip test mixes them with CUDA ops)."""

from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((2, 2), "float16")):
    T.nki.identity(A[0, 0], 1)
    T.nki.memset(A[0, 0], T.float16(0))
    T.nki.tensorreduce(A[0, 0], A[0, 1], "add", False, 0, 1)
    T.nki.matmul(A[0, 0], A[0, 1], A[1, 0])
    T.nki.activation(A[0, 0], A[0, 1], "exp")
    T.nki.tensorscalar(A[0, 0], A[0, 1], T.float16(2), "multiply")
