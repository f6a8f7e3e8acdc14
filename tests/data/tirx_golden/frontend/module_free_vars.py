# A var that no function of a module defines (T.dynamic used in bodies only): TIRx's module
# check accepts it and prints it as a module-level `n = T.dynamic(...)`; two such vars of one
# name print as `n`, `n_1`, and a var two functions share stays shared.
from tirx.script import tirx as T

n = T.dynamic("n", "int32")
m = T.dynamic("n", "int32")


@T.ir_module
class f:
    @T.function(private=True)
    def first(A: T.Tensor((4,), "int32")):
        A[0] = n

    @T.function(private=True)
    def second(A: T.Tensor((4,), "int32")):
        A[1] = n + m
