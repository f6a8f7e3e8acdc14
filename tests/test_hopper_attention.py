"""FlashAttention-3-style attention forward (tirx/kernels/hopper/attention.py): every kernel
compiles to an sm_90a cubin with an empty NVRTC log, no local memory and no ptxas spills
(no GPU needed), its PTX has the pipeline it should (register-A wgmma with an N-major V,
ex2, named-barrier ping-pong); the register-A wgmma op checks its arguments. On a GPU
(skipped cleanly without one): correctness against a float32 reference on fresh random data
with NaN-poisoned outputs."""

from __future__ import annotations

import re

import pytest
from gpu_util import require_gpu as _gpu
from hopper_util import ARCH, assert_round_trips, compile_clean, no_disk_cache  # noqa: F401 (an autouse fixture)
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("cuda.bindings.nvrtc")

import tirx
from tirx.kernels import attn as AH
from tirx.kernels.hopper import attention as A
from tirx.script import tirx as T


@pytest.mark.parametrize("name", sorted(A.KERNELS))
def test_compiles_clean_without_spills(name):
    compile_clean(A.KERNELS[name]())


def test_every_named_kernel_is_a_different_kernel():
    # a name whose kernel equals another's (a tile set that became the default) compiles the
    # same code twice and covers nothing more
    from tirx.kernels.hopper import decode, fp8_gemm, gemm, gemv, matmul, memory

    for mod in (A, decode, fp8_gemm, gemm, gemv, matmul, memory):
        seen: dict = {}
        for name, build in mod.KERNELS.items():
            h = tirx.structural_hash(build())
            assert h not in seen, f"{mod.__name__}: {name} is {seen[h]}"
            seen[h] = name


@pytest.mark.parametrize(
    "name", ["attn_d128", "attn_d64_simple_bm64", "attn_d64_causal_one_loop", "attn_varlen_d64_gqa"]
)
def test_text_roundtrip(name):
    assert_round_trips(A.KERNELS[name]())


def test_fa3_ptx_pipeline():
    k = tirx.compile(A.KERNELS["attn_d128_causal"](), target=ARCH, cache=False)
    ptx = k.ptx
    # S = Q K^T from shared memory, O += P V with P in registers and V N-major (trans-b 1)
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16" in ptx
    rs = re.findall(r"wgmma\.mma_async[^;]*\{[^}]*\},\s*\{[^}]*\},\s*%rd\d+,\s*[p1],\s*1,\s*1,\s*1;", ptx)
    assert len(rs) == 16, "register-A wgmma (trans-b 1): 8 k-steps, in the loop and after it"
    # S = Q K^T: both operands by descriptor, one block of 8 k-steps in the peeled step and the
    # loop each; the first step's scale-d is the block's predicate (set from 0), the rest add
    ss = re.findall(r"wgmma\.mma_async[^;]*\{[^}]*\},\s*%rd\d+,\s*%rd\d+,\s*([p1]),\s*1,\s*1,\s*0,\s*0;", ptx)
    assert ss == ["p"] + ["1"] * 7 + ["p"] + ["1"] * 7
    assert "ex2.approx.ftz.f32" in ptx
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" in ptx
    assert "setmaxnreg.inc.sync.aligned.u32 240" in ptx and "setmaxnreg.dec.sync.aligned.u32 24" in ptx
    assert "bar.sync" in ptx and "bar.arrive" in ptx  # ping-pong turns
    assert "wgmma.wait_group.sync.aligned 1" in ptx  # softmax overlapped with P V
    assert "__launch_bounds__(384, 1)" in k.source


@pytest.mark.parametrize("name", ["attn_d128_one_loop", "attn_d64_causal_one_loop"])
def test_one_loop_has_each_gemm_and_the_softmax_once(name):
    # ONE_LOOP: no peeled step, so the PTX holds each GEMM's k-steps once (one inline-PTX block
    # each) plus one stand-in k-step per GEMM, and one softmax; ptxas keeps the wgmma
    # pipeline (no C75xx "serialized" / "warpgroup.arrive injected" info in its log)
    f = A.KERNELS[name]()
    d = 128 if "d128" in name else 64
    k = tirx.compile(f, target=ARCH, cache=False, options=("--ptxas-options=-v",))
    ptx = k.ptx
    rs = re.findall(r"wgmma\.mma_async[^;]*\{[^}]*\},\s*\{[^}]*\},\s*%rd\d+,\s*[p1],\s*1,\s*1,\s*1;", ptx)
    assert len(rs) == 128 // 16 + 1  # P V: BN / 16 k-steps + the stand-in (B N-major)
    assert len(re.findall(r"wgmma\.mma_async", ptx)) == len(rs) + d // 16 + 1  # S: D / 16 + 1
    assert ptx.count("ex2.approx.ftz.f32") == 2 + 64  # 2 row factors + 64 scores, once
    assert "C75" not in k.module.log, k.module.log
    assert "wgmma.wait_group.sync.aligned 1" in ptx and "bar.arrive" in ptx


def test_one_loop_is_opt_in():
    # the default keeps the peeled schedule (faster on the H200: docs/benchmarks.md)
    cfg = A.best_config(128)
    f = A.make_attention(2, 3, 640, 128, True, **cfg)
    assert tirx.structural_equal(f, A.make_attention(2, 3, 640, 128, True, **cfg, ONE_LOOP=False))
    assert not tirx.structural_equal(f, A.make_attention(2, 3, 640, 128, True, **cfg, ONE_LOOP=True))


def test_simple_schedule_has_no_turns():
    ptx = tirx.compile(A.KERNELS["attn_d128_simple"](), target=ARCH, cache=False).ptx
    assert "bar.arrive" not in ptx and "wgmma.wait_group.sync.aligned 1" not in ptx
    assert re.search(r"%rd\d+, [p1], 1, 1, 1;", ptx)  # P V: A from registers


def test_jit_rejects_bad_shapes():
    with pytest.raises(Exception, match="head dim"):
        A.make_attention(1, 1, 256, 96)
    with pytest.raises(Exception, match="at least BM"):
        A.make_attention(1, 1, 96, 128)
    with pytest.raises(Exception, match="PINGPONG"):
        A.make_attention(1, 1, 256, 128, BM=64, BN=64, PINGPONG=True)
    with pytest.raises(Exception, match="setmaxnreg budget"):
        A.make_attention(1, 1, 384, 128, BM=192)
    with pytest.raises(Exception, match="CHAINS"):
        A.make_attention(1, 1, 256, 128, CHAINS=2)
    with pytest.raises(Exception, match="REVERSE with causal masks needs BN a multiple of BM"):
        A.make_attention(1, 1, 640, 64, True, **A.best_config(64, True), REVERSE=True)
    A.make_attention(1, 1, 640, 64, False, **A.best_config(64), REVERSE=True)  # no mask: any tiles
    with pytest.raises(Exception, match="HKV"):
        A.make_attention(1, 6, 256, 128, HKV=4)


@pytest.mark.parametrize("sched", ["grid", "lpt", "dynamic"])
def test_grouped_query_heads_read_their_group_s_kv_head(sched):
    """HKV < H: query head ``bh`` loads K / V head ``bh // G`` (G = H / HKV) of the (B * HKV * S,
    D) matrices the descriptors map (test_launch_args_map_the_kv_heads_rows); HKV = H (or 0)
    generates the same code as before (no division)."""
    cfg = dict(A.best_config(128, True), SCHED=sched)
    f = A.make_attention(2, 8, 1024, 128, True, **cfg, HKV=2)
    # O is the only tensor argument: Q, K and V come through their descriptors
    assert [p.name for p in f.params][:4] == ["O", "TQ", "TK", "TV"]
    assert [int(x) for x in dict(f.buffer_map)[f.params[0]].shape] == [2, 8, 1024, 128]
    k = compile_clean(f)
    assert re.search(r"kvh = (bh / 4|tirx_floordiv<int>\(bh, 4\));", k.source)
    same = tirx.compile(A.make_attention(2, 8, 1024, 128, True, **cfg, HKV=8), target=ARCH, cache=False)
    base = tirx.compile(A.make_attention(2, 8, 1024, 128, True, **cfg), target=ARCH, cache=False)
    assert same.source == base.source and "kvh" not in base.source


@pytest.mark.parametrize("dt,pack,other", [("float16", "f162", "bf162"), ("bfloat16", "bf162", "f162(")])
def test_p_is_packed_in_the_kernel_s_dtype(dt, pack, other):
    # the P V wgmma reads P's registers as the kernel's dtype: fp16 kernels pack half pairs
    src = tirx.compile(A.make_attention(1, 2, 256, 128, False, dt, **A.best_config(128)), target=ARCH).source
    assert f"tirx_float2_to_{pack}(" in src and f"tirx_float2_to_{other}" not in src


def test_varlen_kernel_reads_its_sequence_from_the_offsets():
    """VARLEN: CTA (x, h, b) covers query block x of head h of sequence b, whose rows start at
    CUQ[b] (keys: CUK[b]) in the packed (tokens, heads * D) matrices; the grid is sized by
    MAXQ at launch, a block past the sequence returns at once, one without keys stores zeros, and
    rows the grid does not cover (MAXQ too small) are stored as NaN (bfloat16 0x7fc0)."""
    f = A.make_attention_varlen(8, 128, True, **A.config_varlen(128, True), HKV=2)
    k = compile_clean(f)
    assert [p.name for p in k.info.params] == ["O", "TQ", "TK", "TV", "CUQ", "CUK", "NB", "NQ", "MAXQ"]
    src = k.source
    for piece in ("max(CUQ[sb], 0)", "CUK[sb]", "blockIdx.z", "return;", "min(CUQ[sb + 1], NQ)", "0x7fc0"):
        assert piece in src, piece
    # the head's columns: query head bh at bh * 128, its K / V head at (bh / 4) * 128
    assert re.search(r"bh \* 128", src) and re.search(r"(bh / 4|tirx_floordiv<int>\(bh, 4\)) \* 128", src)
    with pytest.raises(tirx.DiagnosticError, match="VARLEN takes one CTA per tile"):
        A.make_attention_varlen(8, 128, True, **A.best_config(128, True))


def test_chains_change_only_the_softmax_reductions():
    # CHAINS=4 adds the four-float scratch of the row max / sum and nothing else: the wgmma and
    # exp2 work stays the same
    one = tirx.compile(
        A.make_attention(1, 2, 256, 128, **dict(A.best_config(128), CHAINS=1)), target=ARCH, cache=False
    )
    four = tirx.compile(A.make_attention(1, 2, 256, 128, **A.best_config(128)), target=ARCH, cache=False)
    assert "red[" not in one.source and "red[" in four.source
    for word in ("wgmma.mma_async", "ex2.approx.ftz.f32", "bar.arrive"):
        assert one.ptx.count(word) == four.ptx.count(word), word


def test_reverse_masks_only_the_first_step_when_bn_is_a_multiple_of_bm():
    # REVERSE walks the key blocks from the diagonal down: with BN a multiple of BM only the
    # peeled step can need the causal mask, so the kernel holds one mask (the forward order:
    # two, the peeled step's and the loop's); best_config uses it for causal masks
    def masks(**cfg):
        src = tirx.compile(
            A.make_attention(1, 2, 512, cfg.pop("D"), True, **cfg), target=ARCH, cache=False
        ).source
        return src.count("-1.0000000150474662e+30f;") - 1  # minus the row maxima's start

    fwd, rev = (
        masks(D=128, **dict(A.best_config(128, True), REVERSE=False)),
        masks(D=128, **dict(A.best_config(128, True), REVERSE=True)),
    )
    assert rev > 0 and fwd == 2 * rev, (fwd, rev)
    d64 = dict(D=64, BM=64, BN=128, STAGES=2, OVERLAP=True)  # BN = 2 BM: the loop needs no mask either
    assert masks(**d64) == 2 * masks(**d64, REVERSE=True)
    # the producer loads the key blocks in the same (reversed) order
    assert A.best_config(128, True)["REVERSE"] and "REVERSE" not in A.best_config(128)
    k = tirx.compile(
        A.make_attention(1, 2, 512, 128, True, **A.best_config(128, True)), target=ARCH, cache=False
    )
    assert "const int kb = nblk - 1 - j;" in k.source


def test_one_loop_reverse_masks_only_step_zero():
    # ONE_LOOP with REVERSE (BN a multiple of BM): the diagonal key block is step 0's, so the
    # one loop holds the causal mask once, behind ``j == 0`` (the peeled form: in its peeled step)
    cfg = dict(A.best_config(128, True), ONE_LOOP=True)
    src = tirx.compile(A.make_attention(1, 2, 512, 128, True, **cfg), target=ARCH, cache=False).source
    consumer = src[src.index("setmaxnreg.inc") :]
    assert consumer.count("= -1.0000000150474662e+30f;") == 2  # the row maxima's start; one mask
    mask = consumer.rindex("= -1.0000000150474662e+30f;")
    guard = re.findall(r"if \((\w+) == 0\) \{\s*(?://[^\n]*\s*)*if \(", consumer[:mask])
    assert guard and guard[-1].startswith("j"), "the mask is not behind the step-0 guard"


def test_uniform_shuffles_the_warpgroup_index_and_the_tile_number():
    # UNIFORM (opt-in): the warpgroup index and the dynamic consumers' tile number through a
    # shuffle from lane 0, so ptxas keeps what derives from them in uniform registers (measured:
    # +4 % for the causal one loop, within noise or -3 % for the peeled kernels;
    # docs/benchmarks.md); without it the kernel is the one measured before the option existed
    def source(**over):
        f = A.make_attention(1, 2, 512, 128, True, **dict(A.best_config(128, True), **over))
        return tirx.compile(f, target=ARCH, cache=False).source

    plain, uniform = source(), source(UNIFORM=True)
    assert "__shfl_sync(0xffffffffu, tx / 128, 0)" in uniform and "const int wg = tx / 128;" in plain
    assert "__shfl_sync(0xffffffffu, tid[0], 0)" in uniform
    assert "__shfl_sync(0xffffffffu, tid[0]" not in plain and "__shfl_sync(0xffffffffu, tx" not in plain
    cfg = A.best_config(128, True)
    f = A.make_attention(1, 2, 512, 128, True, **cfg)
    assert tirx.structural_equal(f, A.make_attention(1, 2, 512, 128, True, **cfg, UNIFORM=False))


@given(st.sampled_from([64, 128, 192]))
def test_v_descriptor_fields(bn):
    hi = A.v_desc_hi(bn)
    assert (hi >> 16) & 0x3FFF == bn * 128 // 16  # LBO: the next 64-column chunk of V
    assert (hi >> 32) & 0x3FFF == 1024 // 16  # SBO: the next 8 rows
    assert hi >> 62 == 1 and hi & 0xFFFF == 0  # 128-byte swizzle, start address added later


@T.function
def _descs(X: T.Tensor((2,), "uint32"), Y: T.Tensor((4,), "uint64")):
    # the descriptors of one K-major (DESC_HI) and one N-major (v_desc_hi) operand at shared
    # address X[0] + offset X[1]: desc() against the full 64-bit formula it replaces
    base = X[0]
    off = X[1]
    Y[0] = A.desc(A.DESC_HI, base >> 4, off >> 4)
    Y[1] = T.uint64(A.DESC_HI) | T.cast((base + off) >> 4, "uint64")
    Y[2] = A.desc(A.v_desc_hi(128), base >> 4, off >> 4)
    Y[3] = T.uint64(A.v_desc_hi(128)) | T.cast((base + off) >> 4, "uint64")


@given(st.integers(0, (1 << 18) // 16 - 1), st.integers(0, (1 << 18) // 16 - 1))
def test_desc_is_the_64_bit_descriptor(b16, o16):
    # any 16-byte aligned base and offset whose sum stays inside shared memory (< 256 KB)
    import numpy as np

    if b16 + o16 >= (1 << 18) // 16:
        o16 = (1 << 18) // 16 - 1 - b16
    y = np.zeros(4, dtype=np.uint64)
    tirx.compile(_descs, target="interp")(np.array([16 * b16, 16 * o16], dtype=np.uint32), y)
    assert y[0] == y[1] and y[2] == y[3]
    assert int(y[1]) == A.DESC_HI | (b16 + o16)


def _acc_pos(t: int, idx: int) -> tuple[int, int]:
    """(row, col) of accumulator element ``idx`` of thread ``t`` (0..127), wgmma m64nN f32."""
    warp, lane = divmod(t, 32)
    i, e = divmod(idx, 4)
    return warp * 16 + lane // 4 + 8 * (e // 2), 8 * i + (lane % 4) * 2 + e % 2


def _a_frag_pos(t: int, reg: int, half: int) -> tuple[int, int]:
    """(row, col) of A-fragment element ``2 * reg + half`` of thread ``t``, wgmma m64k16."""
    warp, lane = divmod(t, 32)
    el = 2 * reg + half  # a0..a7
    return warp * 16 + lane // 4 + 8 * ((el // 2) % 2), (lane % 4) * 2 + el % 2 + 8 * (el // 4)


@given(st.integers(0, 127), st.integers(0, 7), st.integers(0, 3), st.integers(0, 1))
def test_p_pack_is_the_a_fragment(t, k, reg, half):
    # pa[4k + reg] packs sacc[8k + 2 reg + half]: that score must sit where the A fragment of
    # k-step k wants its element (2 reg + half), shifted by 16 k columns
    r, c = _acc_pos(t, 2 * (4 * k + reg) + half)
    ra, ca = _a_frag_pos(t, reg, half)
    assert (r, c) == (ra, ca + 16 * k)


def _bad_rs(**kw):
    shape = kw.get("shape", "m64n64k16")
    dtype = kw.get("dtype", "bf16")
    tb = kw.get("tb", 1)
    adt = kw.get("adt", "uint32")

    @T.function
    def bad(C: T.Tensor((4,), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
        acc = T.alloc_local((32,), "float32")
        a = T.alloc_local((4,), adt)
        for i in range(32):
            acc[i] = C[i % 4]
        for i in range(4):
            a[i] = T.cast(C[i], adt)
        T.ptx.wgmma_fence()  # (a run-time descriptor: ptxas 13.0 crashed on a constant 0)
        T.ptx.wgmma_mma_async_rs(
            shape, dtype, T.address_of(acc[0]), T.address_of(a[0]), T.cast(a[0], "uint64"), 1, tb
        )
        T.ptx.wgmma_commit_group()
        T.ptx.wgmma_wait_group(0)
        C[0] = acc[0]

    return bad


def test_wgmma_rs_compiles_and_checks_its_arguments():
    ok = tirx.compile(_bad_rs(), target=ARCH, cache=False)
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16" in ok.ptx
    for kw, msg in (
        (dict(shape="m64n7k16"), "multiple of 8"),
        (dict(shape="m64n64k32"), "shape"),
        (dict(dtype="e4m3"), "dtype"),
        (dict(tb=2), "trans_b"),
        (dict(adt="float32"), "A fragment"),
    ):
        with pytest.raises(tirx.DiagnosticError, match=msg):
            tirx.compile(_bad_rs(**kw), target=ARCH, cache=False)


# ------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
@pytest.mark.parametrize(
    "b,h,s,d,causal,cfg",
    [
        (1, 2, 256, 128, False, dict(BM=128, BN=128, STAGES=2)),
        (2, 3, 512, 64, True, dict(BM=128, BN=128, STAGES=2)),
        (1, 2, 384, 128, True, dict(BM=64, BN=64, STAGES=2)),
        (1, 2, 128, 128, True, A.best_config(128)),  # one key block: no loop turns
        (2, 2, 640, 128, True, dict(A.best_config(128), OVERLAP=False)),
        (2, 2, 1024, 128, False, A.best_config(128)),
        (1, 3, 768, 64, True, A.best_config(64)),
        (1, 2, 1024, 64, False, dict(A.best_config(64), OVERLAP=True, STAGES=4)),
        (1, 2, 512, 128, True, dict(BM=128, BN=128, STAGES=3, OVERLAP=True)),
        # ragged: the last query tile and / or key block reach past the sequence
        (2, 2, 400, 128, False, dict(BM=128, BN=176, STAGES=2, PINGPONG=True, OVERLAP=True)),
        (2, 2, 528, 128, True, dict(BM=128, BN=176, STAGES=2, PINGPONG=True, OVERLAP=True)),
        (2, 3, 640, 64, False, dict(BM=192, BN=128, STAGES=4, OVERLAP=True, CONSUMER_REGS=160)),
        (2, 3, 640, 64, True, dict(BM=192, BN=128, STAGES=4, PINGPONG=True, CONSUMER_REGS=160)),
        (1, 2, 384, 128, False, dict(BM=128, BN=128, STAGES=2)),
        # ONE_LOOP (no peeled step): one key block, ragged, overlap / ping-pong alone
        (1, 2, 128, 128, True, dict(A.best_config(128), ONE_LOOP=True)),
        (2, 2, 1024, 128, False, dict(A.best_config(128), ONE_LOOP=True)),
        (1, 3, 768, 64, True, dict(A.best_config(64, True), ONE_LOOP=True)),
        (2, 2, 528, 128, True, dict(BM=128, BN=176, STAGES=2, PINGPONG=True, OVERLAP=True, ONE_LOOP=True)),
        (
            2,
            3,
            640,
            64,
            False,
            dict(BM=192, BN=128, STAGES=4, OVERLAP=True, CONSUMER_REGS=160, ONE_LOOP=True),
        ),
        (2, 2, 640, 128, True, dict(A.best_config(128), OVERLAP=False, ONE_LOOP=True)),
        # REVERSE: key blocks from the last one down (masks first), every consumer path
        (1, 2, 128, 128, True, dict(A.best_config(128, True), REVERSE=True)),
        (2, 3, 1024, 128, True, dict(A.best_config(128, True), REVERSE=True)),
        (2, 2, 1024, 128, False, dict(A.best_config(128), REVERSE=True)),
        (2, 2, 528, 128, True, dict(BM=128, BN=128, STAGES=2, PINGPONG=True, OVERLAP=True, REVERSE=True)),
        (2, 2, 400, 128, False, dict(BM=128, BN=176, STAGES=2, PINGPONG=True, OVERLAP=True, REVERSE=True)),
        (2, 3, 640, 64, True, dict(BM=128, BN=128, STAGES=4, PINGPONG=True, OVERLAP=True, REVERSE=True)),
        (2, 3, 640, 64, False, dict(A.best_config(64), REVERSE=True)),
        (1, 2, 1000, 64, True, dict(BM=64, BN=128, STAGES=2, OVERLAP=True, REVERSE=True)),  # BN = 2 BM
        (1, 2, 384, 128, True, dict(BM=64, BN=64, STAGES=2, REVERSE=True)),
        (2, 2, 640, 128, True, dict(A.best_config(128, True), ONE_LOOP=True, REVERSE=True)),
        (2, 2, 640, 128, True, dict(A.best_config(128, True), OVERLAP=False, REVERSE=True)),
        # UNIFORM: warpgroup index and tile number through a shuffle
        (2, 3, 1024, 128, True, dict(A.best_config(128, True), ONE_LOOP=True, UNIFORM=True)),
        (2, 3, 640, 64, False, dict(A.best_config(64), UNIFORM=True)),
        (1, 3, 768, 64, True, dict(A.best_config(64, True), UNIFORM=True)),
    ],
)
def test_gpu_attention(b, h, s, d, causal, cfg):
    _check_attention(b, h, h, s, d, causal, cfg)


@pytest.mark.gpu
@pytest.mark.parametrize(
    "b,h,hkv,s,d,causal,cfg",
    [
        (2, 8, 2, 512, 128, True, A.best_config(128, True)),
        (1, 6, 1, 384, 64, False, A.best_config(64)),  # multi-query: one K / V head
        (2, 4, 2, 400, 128, False, dict(BM=128, BN=176, STAGES=2, PINGPONG=True, OVERLAP=True)),
        (1, 8, 4, 1024, 128, True, dict(A.best_config(128, True), SCHED="persistent")),
        (2, 6, 3, 640, 64, True, dict(A.best_config(64, True), SCHED="lpt")),
    ],
)
def test_gpu_grouped_query_attention(b, h, hkv, s, d, causal, cfg):
    _check_attention(b, h, hkv, s, d, causal, dict(cfg, HKV=hkv))


def _check_attention(b, h, hkv, s, d, causal, cfg):
    torch = _gpu()
    import torch.nn.functional as F

    q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    o = torch.full_like(q, float("nan"))
    kern = tirx.compile(A.make_attention(b, h, s, d, causal, **cfg), target="cuda")
    AH.run(kern, q, k, v, o, **cfg)
    torch.cuda.synchronize()
    assert not torch.isnan(o).any(), "NaN in output (unwritten element?)"
    # each group of h / hkv query heads attends to one K / V head
    kf, vf = (t.float().repeat_interleave(h // hkv, dim=1) for t in (k, v))
    ref = F.scaled_dot_product_attention(q.float(), kf, vf, is_causal=causal)
    err = ((o.float() - ref).norm() / ref.norm()).item()
    assert err < 1e-2, err


@pytest.mark.gpu
@pytest.mark.parametrize("d,causal", [(64, True), (128, False)])
def test_gpu_attention_helper(d, causal):
    torch = _gpu()
    import torch.nn.functional as F

    q, k, v = (torch.randn(1, 2, 640, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = AH.attention(q, k, v, causal=causal)  # best_config tiles (head dim 64: a partial 192-row tile)
    torch.cuda.synchronize()
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    assert ((o.float() - ref).norm() / ref.norm()).item() < 1e-2


def test_launch_args_map_the_kv_heads_rows(monkeypatch):
    """The descriptors ``launch_args`` builds: Q over ``B * H * S`` rows in ``BM``-row boxes, K and
    V over ``B * HKV * S`` rows in ``BN``-row boxes (grouped-query attention), each at its
    tensor's address; the output and, for the dynamic scheduler, the counter passed as they are."""
    from hopper_util import fake_tma_driver

    from tirx.kernels import _host
    from tirx.runtime.bounded import Bounded

    calls = fake_tma_driver(monkeypatch)
    monkeypatch.setattr(_host, "_MAPS", Bounded(64))
    monkeypatch.setattr(_host, "_ENCODERS", {})

    class T4:  # what launch_args reads of a torch tensor
        def __init__(self, ptr, shape):
            self.ptr, self.shape, self.dtype = ptr, shape, "bfloat16"

        def data_ptr(self):
            return self.ptr

    monkeypatch.setattr(_host, "dtype_name", lambda t: t.dtype)
    q, k, v, o = (
        T4(1 << 20, (2, 8, 384, 128)),
        T4(2 << 20, (2, 2, 384, 128)),
        T4(3 << 20, (2, 2, 384, 128)),
        T4(4 << 20, (2, 8, 384, 128)),
    )
    args = AH.launch_args(q, k, v, o, BM=128, BN=64)
    assert args[0] is o and len(args) == 4 and all(type(a) is bytes and len(a) == 128 for a in args[1:])
    assert [c[:2] for c in calls] == [
        (1 << 20, [128, 2 * 8 * 384]),
        (2 << 20, [128, 2 * 2 * 384]),
        (3 << 20, [128, 2 * 2 * 384]),
    ]
    assert [c[3] for c in calls] == [[64, 128], [64, 64], [64, 64]]


def test_varlen_maps_map_the_packed_heads(monkeypatch):
    """``varlen_maps``: Q as a (tokens, H * D) matrix in BM-row boxes of 64 columns, K and V as
    (kv_tokens, HKV * D) in BN-row boxes, each at its tensor's address (a head is a column
    range: the kernel's box starts at column head * D)."""
    from hopper_util import fake_tma_driver

    from tirx.kernels import _host
    from tirx.runtime.bounded import Bounded

    calls = fake_tma_driver(monkeypatch)
    monkeypatch.setattr(_host, "_MAPS", Bounded(64))
    monkeypatch.setattr(_host, "_ENCODERS", {})
    monkeypatch.setattr(_host, "dtype_name", lambda t: "bfloat16")

    class T3:
        def __init__(self, ptr, shape):
            self.ptr, self.shape = ptr, shape

        def data_ptr(self):
            return self.ptr

    maps = AH.varlen_maps(
        T3(1 << 20, (1000, 8, 128)), T3(2 << 20, (900, 2, 128)), T3(3 << 20, (900, 2, 128)), 128, 64
    )
    assert all(type(m) is bytes and len(m) == 128 for m in maps)
    assert [c[:3] for c in calls] == [
        (1 << 20, [8 * 128, 1000], [8 * 128 * 2]),
        (2 << 20, [2 * 128, 900], [2 * 128 * 2]),
        (3 << 20, [2 * 128, 900], [2 * 128 * 2]),
    ]
    assert [c[3] for c in calls] == [[64, 128], [64, 64], [64, 64]]


def test_attention_argument_checks_name_the_argument(monkeypatch):
    """The checks ``attention`` and ``attention_varlen`` share (``_check_qkv``), with tensors
    standing in for torch's: K / V heads dividing H, the other axes q's (dense: batch, sequence,
    head dim; packed: head dim only), one shape for K and V, contiguity, head dim."""
    from tirx.kernels import _host

    class F:
        def __init__(self, shape, contiguous=True, dtype="bfloat16"):
            self.shape, self.contiguous, self.dtype = shape, contiguous, dtype

        def is_contiguous(self):
            return self.contiguous

    def check_cuda(name, t, dtypes, ndim=None):
        if t.dtype not in dtypes:
            raise TypeError(f"{name}: dtype")
        if ndim is not None and len(t.shape) != ndim:
            raise ValueError(f"{name}: expected a {ndim}-d tensor")
        return t.dtype

    monkeypatch.setattr(_host, "check_cuda", check_cuda)
    dense = ("(B, H, S, D)", "(B, HKV, S, D)", (0, 2, 3))
    packed = ("(tokens, H, D)", "(kv_tokens, HKV, D)", (2,))
    q4, kv4 = F((2, 8, 256, 128)), F((2, 2, 256, 128))
    assert AH._check_qkv(q4, kv4, kv4, *dense) == "bfloat16"
    q3 = F((1000, 8, 64))
    assert AH._check_qkv(q3, F((700, 4, 64)), F((700, 4, 64)), *packed) == "bfloat16"  # other key count
    bad = [
        ((q4, F((2, 3, 256, 128)), kv4, dense), r"^k: .*expected \(B, HKV, S, D\) with HKV dividing H = 8"),
        ((q4, F((2, 2, 128, 128)), kv4, dense), r"^k: shape \(2, 2, 128, 128\) does not fit"),
        ((q4, kv4, F((1, 2, 256, 128)), dense), r"^v: shape"),
        ((q3, F((700, 4, 128)), F((700, 4, 128)), packed), r"^k: .*expected \(kv_tokens, HKV, D\)"),
        ((q3, F((700, 4, 64)), F((701, 4, 64)), packed), r"^v: shape \(701, 4, 64\) differs from k's"),
        (
            (F((1000, 8, 64), False), F((7, 4, 64)), F((7, 4, 64)), packed),
            r"^q: expected a contiguous \(tokens",
        ),
        ((q4, kv4, F((2, 2, 256, 128), False), dense), r"^v: expected a contiguous \(B, HKV, S, D\)"),
        ((F((9, 8, 96)), F((9, 8, 96)), F((9, 8, 96)), packed), r"^q: head dim 96 is not supported"),
    ]
    for (q, k, v, lay), msg in bad:
        with pytest.raises(ValueError, match=msg):
            AH._check_qkv(q, k, v, *lay)
    with pytest.raises(TypeError, match=r"^v: dtype"):
        AH._check_qkv(q4, kv4, F((2, 2, 256, 128), dtype="float16"), *dense)


def test_an_attention_call_s_plan_maps_q_and_the_kv_heads(monkeypatch):
    """The plan ``attention`` remembers per call (kernel, descriptors, the scheduler's counter or
    not): ``_call_plan`` maps the descriptors the kernel reads (Q's rows, the K / V heads' rows)
    and names the dynamic scheduler. (The memo itself is exercised on a GPU: the public call
    twice gives the same result, tests/test_kernels_library_gpu.py.)"""
    from hopper_util import fake_tma_driver

    from tirx.kernels import _host
    from tirx.runtime.bounded import Bounded

    calls = fake_tma_driver(monkeypatch)
    monkeypatch.setattr(_host, "_MAPS", Bounded(64))
    monkeypatch.setattr(_host, "_ENCODERS", {})
    monkeypatch.setattr(_host, "dtype_name", lambda t: t.dtype)
    monkeypatch.setattr(AH, "_compiled", lambda *a: ("kernel", a))

    class T4:
        def __init__(self, ptr, shape):
            self.ptr, self.shape, self.dtype = ptr, shape, "bfloat16"

        def data_ptr(self):
            return self.ptr

    q, k, v = T4(1 << 20, (2, 8, 384, 128)), T4(2 << 20, (2, 2, 384, 128)), T4(3 << 20, (2, 2, 384, 128))
    cfg = dict(A.best_config(128, True), HKV=2)
    kern, maps, dynamic = AH._call_plan(q, k, v, True, "bfloat16", cfg, tuple(sorted(cfg.items())))
    assert kern == ("kernel", (2, 8, 384, 128, True, "bfloat16", tuple(sorted(cfg.items()))))
    assert dynamic and len(maps) == 3 and [c[1] for c in calls] == [[128, 6144], [128, 1536], [128, 1536]]
    assert not AH._call_plan(q, k, v, False, "bfloat16", A.best_config(128), ())[2]
    # tiles left out are the kernel's defaults: 128-row boxes
    calls.clear()
    AH._call_plan(T4(5 << 20, (1, 2, 256, 64)), k, v, False, "bfloat16", {"STAGES": 3}, ())
    assert calls[0][3] == [64, 128]


def test_an_attention_call_seen_before_is_one_lookup(monkeypatch):
    """``attention`` on tensors seen before (the same addresses, shapes, dtypes and strides: what
    decides its checks and its plan) skips the checks and the tile choice; any of them changed
    is checked and planned again, and what is not a tensor gets the checks' error."""
    import sys
    import types

    from tirx.runtime.bounded import Bounded

    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(empty_like=lambda t: ("o", t.shape)))
    monkeypatch.setattr(AH, "_CALLS", Bounded(16))
    checks, plans, launches = [], [], []
    monkeypatch.setattr(AH, "_check_qkv", lambda q, k, v, *a: checks.append(1) or "bfloat16")

    def plan(q, k, v, causal, dt, cfg, key):
        plans.append(dict(key))
        return (lambda *args: launches.append(args)), ("tq", "tk", "tv"), False

    monkeypatch.setattr(AH, "_call_plan", plan)

    class T4:
        def __init__(self, ptr, shape, stride=None, dtype="bf16"):
            self.ptr, self.shape, self.dtype = ptr, shape, dtype
            self._stride = stride or (shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1)

        def data_ptr(self):
            return self.ptr

        def stride(self):
            return self._stride

    q, k = T4(1 << 20, (2, 8, 384, 128)), T4(2 << 20, (2, 2, 384, 128))
    for _ in range(3):
        assert AH.attention(q, k, k, causal=True) == ("o", q.shape)
    assert len(checks) == len(plans) == 1 and plans[0]["HKV"] == 2 and len(launches) == 3
    assert launches[0] == (("o", q.shape), "tq", "tk", "tv")
    others = [
        (T4(1 << 20, q.shape, stride=(1, 2, 3, 4)), k, k, True),  # a view of other strides
        (T4(1 << 20, q.shape, dtype="fp16"), k, k, True),
        (q, T4(3 << 20, k.shape), k, True),
        (q, k, k, False),
    ]
    for a, b, c, causal in others:
        AH.attention(a, b, c, causal=causal)
    assert len(checks) == len(plans) == 5
    AH.attention(q, k, k, causal=True, BM=64)  # other tiles: their own plan
    assert len(plans) == 6 and plans[-1]["BM"] == 64
    monkeypatch.setattr(AH, "_check_qkv", lambda *a: (_ for _ in ()).throw(TypeError("q: expected a tensor")))
    with pytest.raises(TypeError, match="q: expected a tensor"):
        AH.attention(object(), k, k)
