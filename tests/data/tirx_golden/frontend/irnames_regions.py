# A tensor region as TIRx's users build one: T.TensorRegion of T.Range per dimension with its
# T.TensorRegionType (a Python value: its bounds drive a loop), the type as an annotation and
# in isinstance tests with T.Type.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8, 4), T.int32), r0: T.TensorRegionType()):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    r = T.TensorRegion(A, [T.Range(2, 6), T.Range(1, 3)], T.TensorRegionType())
    for i in T.serial(r.region[0].begin, r.region[0].begin + r.region[0].extent):
        A[i, r.region[1].begin] = r.region[1].extent
    A[0, 0] = isinstance(r, T.TensorRegion) + isinstance(r.ty, T.TensorRegionType) + isinstance(r.ty, T.Type)
