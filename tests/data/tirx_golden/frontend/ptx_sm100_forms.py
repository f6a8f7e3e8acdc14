from tirx.script import tirx as T


@T.function
def f(
    H: T.Tensor((4,), "uint16"),
    W: T.Tensor((8,), "uint32"),
    X: T.Tensor((4,), "float32"),
    Q: T.Tensor((2,), "uint64"),
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
    S = T.alloc_shared((64,), "uint32")
    tid = T.cuda.thread_idx("x")
    # microscaling conversions (sm_100a)
    T.ptx.cvt.rz.ue8m0x2.f32(H[0], X[1], X[0])
    T.ptx["cvt.rp.satfinite.ue8m0x2.bf16x2"](H[1], W[0])
    T.ptx.cvt.rn.bf16x2.ue8m0x2(W[1], H[0])
    T.ptx.cvt.rn.bf16x2.e4m3x2(W[2], H[1])
    T.ptx["cvt.rn.satfinite.e5m2x2.f16x2"](H[2], W[3])
    T.ptx["cvt.rn.satfinite.e2m3x2.f32"](H[3], X[2], X[3])
    T.ptx["cvt.rn.f16x2.e3m2x2"](W[4], H[3])
    T.ptx["cvt.rs.satfinite.e4m3x4.f32"](W[5], X[0], X[1], X[2], X[3], W[6])
    T.ptx["cvt.rna.satfinite.tf32.f32"](W[7], X[0])
    # b8 matrices and shared-memory stores
    T.ptx.stmatrix.sync.aligned.m16n8.x1.trans.shared.b8(S.ptr_to([0]), W[0])
    T.ptx["ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8"](W[0], W[1], S.ptr_to([0]))
    T.ptx.st.shared.u32(S.ptr_to([tid]), W[2])
    T.ptx.st.shared.u32(S.data, W[3])
    T.ptx.st.shared.v4.b32(S.ptr_to([4]), W[0], W[1], W[2], W[3])
    T.ptx.st_bulk.weak.shared__cta(S.ptr_to([8]), T.uint64(16))
    T.ptx.fns.b32(W[4], W[0], W[1], T.int32(2))
    T.cuda.cta_sync()
    W[tid % 8] = S[tid]
    Q[0] = T.uint64(H[0])
