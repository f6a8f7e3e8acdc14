# Float folding: float32 in float32 arithmetic, float64, identities; float16 constants stay.
from tirx.script import tirx as T


@T.function
def f(B: T.Tensor((32,), T.float32), H: T.Tensor((8,), T.float16), E: T.Tensor((8,), T.float64)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    B[0] = T.float32(1.5) + T.float32(2.0)
    B[1] = B[2] + T.float32(0.0)
    B[3] = B[2] * T.float32(1.0)
    B[4] = B[1] * T.float32(0.0)
    B[5] = B[1] / T.float32(1.0)
    B[6] = T.float32(1.0) / T.float32(3.0)
    B[7] = T.float32(0.0) / B[1]
    B[8] = T.float32(1.0) - T.float32(0.1)
    B[9] = T.float32(0.0) - B[1]
    B[10] = T.float32(0.1) + T.float32(0.2)
    B[11] = T.float32(3e38) + T.float32(3e38)
    B[12] = T.float32(2.0) * B[6] * T.float32(1.0)
    H[0] = H[1] + T.float16(0.0)
    H[2] = T.float16(1.0) + T.float16(2.0)
    E[0] = T.float64(0.1) + T.float64(0.2)
