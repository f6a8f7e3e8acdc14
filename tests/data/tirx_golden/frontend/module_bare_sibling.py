# Inside an @T.ir_module class body a bare name of another function of the module calls it, as
# Module.<name> does; a T.local_scalar's .source is the one-element tensor (TIRx's TensorLoad
# field); T.inline(hygienic=False) resolves free names in the caller.
from tirx.script import tirx as T


@T.inline
def bump(target, index, value):
    target[index] += value


@T.inline(hygienic=False)
def add_lane(B, i):
    B[i] = B[i] + lane  # noqa: F821  (the caller's `lane`)


@T.ir_module
class f:
    @T.function(private=True)
    def twice(x: T.int32) -> T.int32:
        return x * 2

    @T.function
    def main(A: T.Tensor((32,), "int32"), B: T.Tensor((32,), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        lane = T.cuda.thread_idx("x")
        cell = T.local_scalar("int32", A[lane])
        bump(cell.source, 0, twice(twice(lane)))
        B[lane] = cell
        add_lane(B, lane)
