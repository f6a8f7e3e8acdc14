# A parameter that only a tensor's layout names (a row pitch) is a file-level T.dynamic, written
# `pitch: pitch`, as TIRx prints it (held-out round 17: tirx printed `pitch: T.int32`).
from tirx.script import tirx as T

H = T.dynamic("H", dtype="int32")
W = T.dynamic("W", dtype="int32")
pitch = T.dynamic("pitch", dtype="int32")


@T.function
def f(
    H: H,
    W: W,
    pitch: pitch,
    src: T.Tensor((H, W), "uint8", layout=T.TileLayout(T.S[(H, W):(pitch, 1)])),
    dst: T.Tensor((H, W), "uint8"),
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=H, block=32))
    dst[0, 0] = src[0, 0]
