# TIRx's Python-only T.cuda members: namespace classes (their instances call the same ops),
# thread scopes, the backend-config dict type, the TMA option record and the leaked annotations flag.
from tirx.script import tirx as T

CONFIG: T.cuda.BackendConfig = {"arch": "sm_90a", "compiler": "nvrtc"}
SCOPE = T.cuda.ThreadScope("warp")
assert (
    SCOPE.name == "cuda.warp" and SCOPE.rank == 3 and T.cuda.ThreadScope("cta") == T.cuda.ThreadScope("cta")
)
TMA = T.cuda.TensorMapEncodeTiledAttr("float16", 2, swizzle=3)
assert TMA.rank == 2 and TMA.swizzle == 3 and TMA.force_cu_dtype == -1
assert T.cuda.annotations.compiler_flag
PTX = T.cuda.PTXNamespace
assert isinstance(T.cuda.iket, T.cuda.IketNamespace) and isinstance(T.cuda.wgmma, T.cuda.CudaWgmmaNamespace)


@T.function
def f(A: T.Tensor((64,), T.float16), F: T.Tensor((8,), T.float32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    S = T.alloc_shared((64,), "float16")
    a = T.alloc_local((8,), "float16")
    T.cuda.IketNamespace().mark("start")
    T.cuda.STIRNamespace().cp_async_raw(S.data, 0, A.data, 0, 16)
    T.cuda.PTXLegacyNamespace().ldmatrix(False, 4, ".b16", a.data, 0, S.data, 8)
    T.cuda.CudaWgmmaNamespace().noop_barrier(F[0])
