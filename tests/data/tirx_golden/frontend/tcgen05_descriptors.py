from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((128,), "uint32"), B: T.Tensor((128,), "uint64")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    s = T.alloc_shared((1024,), "float16")
    x = T.alloc_local((2,), "uint64")
    y = T.alloc_local((4,), "uint32")
    T.cuda.tcgen05_encode_instr_descriptor(
        T.address_of(y[0]),
        d_dtype="float32",
        a_dtype="bfloat16",
        b_dtype="bfloat16",
        M=128,
        N=256,
        K=16,
        trans_a=False,
        trans_b=True,
    )
    T.cuda.tcgen05.encode_instr_descriptor(
        T.address_of(y[1]),
        d_dtype="int32",
        a_dtype="int8",
        b_dtype="uint8",
        M=128,
        N=64,
        K=32,
        trans_a=True,
        trans_b=False,
        n_cta_groups=2,
        sat_d=True,
    )
    T.cuda.tcgen05_encode_instr_descriptor_block_scaled(
        T.address_of(y[2]),
        d_dtype="float32",
        a_dtype="float4_e2m1fn",
        b_dtype="float4_e2m1fn",
        sfa_dtype="float8_e4m3fn",
        sfb_dtype="float8_e4m3fn",
        M=128,
        N=128,
        K=64,
        trans_a=False,
        trans_b=False,
    )
    T.cuda.runtime_instr_desc(T.address_of(y[2]), 1)
    T.cuda.tcgen05_encode_matrix_descriptor(T.address_of(x[0]), T.address_of(s[512]), 1, 64, 3)
    T.cuda.tcgen05.encode_matrix_descriptor(T.address_of(x[1]), s.data, 8, 32, 0)
    y[3] = T.cuda.get_tmem_addr(y[0], 32, 8) ^ T.cuda.sm100_2sm_leader_smem_addr(s.data)
    A[T.cuda.thread_idx("x")] = y[0] + y[1] + y[2] + y[3]
    B[T.cuda.thread_idx("x")] = x[0] + x[1]
