# TIRx's T.cuda namespace classes and option records as its users write them: instances of
# NVSHMEMNamespace / the scoped NVSHMEM*NBINamespace classes / CudaTcgen05Namespace call the ops,
# and the tcgen05 instruction-descriptor encoders take their options as one attrs= record
# (T.cuda.TCGen05InstrDescriptorAttrs, ...BlockScaledAttrs; positional or by keyword).
from tirx.script import tirx as T

NV = T.cuda.NVSHMEMNamespace()
PUT = T.cuda.NVSHMEMPutMemNBINamespace()
GET = T.cuda.NVSHMEMGetMemNBINamespace()
SIG = T.cuda.NVSHMEMPutMemSignalNBINamespace()
TC = T.cuda.CudaTcgen05Namespace()


@T.function
def f(A: T.Tensor((64,), T.int32), B: T.Tensor((64,), T.int32), S: T.Tensor((4,), T.uint64), D: T.Tensor((4,), T.uint32)):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    s = T.alloc_shared((1024,), "float16")
    x = T.alloc_local((2,), "uint64")
    y = T.alloc_local((2,), "uint32")
    peer = (NV.my_pe() + 1) % NV.n_pes()
    PUT(B.ptr_to([0]), A.ptr_to([0]), 4, peer)
    PUT.warp(B.ptr_to([0]), A.ptr_to([0]), 128, peer)
    GET.block(B.ptr_to([0]), A.ptr_to([0]), 128, peer)
    SIG.warp(B.ptr_to([0]), A.ptr_to([0]), 128, S.ptr_to([1]), T.uint64(1), "set", peer)
    TC.encode_matrix_descriptor(T.address_of(x[0]), s.data, 8, 32, 0)
    T.cuda.tcgen05_encode_instr_descriptor(
        T.address_of(y[0]),
        attrs=T.cuda.TCGen05InstrDescriptorAttrs("float32", "bfloat16", "bfloat16", 128, 256, 16, False, True),
    )
    TC.encode_instr_descriptor(
        T.address_of(y[1]),
        attrs=T.cuda.TCGen05InstrDescriptorAttrs(
            d_dtype="int32", a_dtype="int8", b_dtype="uint8", M=128, N=64, K=32, trans_a=True, trans_b=False,
            n_cta_groups=2, sat_d=True,
        ),
    )
    T.cuda.tcgen05_encode_instr_descriptor_block_scaled(
        T.address_of(y[1]),
        attrs=T.cuda.TCGen05InstrDescriptorBlockScaledAttrs(
            "float32", "float4_e2m1fn", "float4_e2m1fn", "float8_e4m3fn", "float8_e4m3fn", 128, 128, 64, False, False
        ),
    )
    D[0] = y[0] + y[1]
    S[0] = x[0]
