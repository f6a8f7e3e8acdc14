"""``matmul``, ``linear`` and ``scaled_matmul`` on torch CUDA tensors, at any shape.

The kernel is ``tirx/kernels/hopper/matmul.py`` (its script is the documentation of how it is
done). One compiled kernel per dtype and tile set serves every ``(M, N, K)``: the sizes and the
TMA descriptors are launch arguments, so a new shape costs host time only (descriptors come
from a cache keyed by exactly what they encode, ``tirx.kernels._host``). Edges are handled by
TMA's zero fill and clipped stores, never by padding copies.

``linear(x, w)`` takes ``nn.Linear``'s ``(N, K)`` weight as it is stored (B K-major, the
layout wgmma reads for every dtype); ``matmul(a, b)`` takes a ``(K, N)`` ``b`` either row-major
(as torch makes it: read N-major, wgmma's transposed B, fp16 / bf16) or K-major
(``b.stride() == (1, K)``, e.g. ``w.t()``). fp8 (``scaled_matmul``) reads B K-major only, as
``torch._scaled_mm`` does.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from tirx.kernels._host import (
    check_cuda,
    dtype_name,
    map_template,
    per_stream,
    sm_count,
    takes_arrays,
    tensor_map,
)
from tirx.runtime.bounded import Bounded

__all__ = ["config", "linear", "matmul", "scaled_matmul"]

_HALF = ("float16", "bfloat16")
_FP8 = ("float8_e4m3fn", "float8_e5m2")
_SMEM = 232448  # bytes of shared memory a CTA may take on sm_90
#: rows of A up to which ``linear`` / a K-major ``matmul`` stream B with the CUDA-core decode
#: GEMV (``tirx/kernels/hopper/gemv.py``: one warp per row of B)
GEMV_MAX_M = 2
#: rows of A up to which they take the tensor-core GEMV (``make_gemv_mma``) where the wgmma
#: tiles would leave SMs idle
MMA_GEMV_MAX_M = 8


#: the tile-choice model for more than 64 rows, fitted to an H100 sweep
#: (``tools/bench/gemm_model_fit.py`` over ``tools/bench/data/gemm_tiles_h100.json``: 62 timings,
#: the fastest tile set picked for 12 of the 13 shapes timed with several; docs/benchmarks.md,
#: "GEMM tile choice" and "Split-K summed in the kernel"): µs a 128 x 256 k-block takes one SM,
#: the relative speed of narrower tiles (wgmma's smaller N reads more shared memory per MAC), µs a
#: work unit spends filling its pipeline and storing, split-K's cost (a fixed part: the fence, the
#: ticket and the last share's wait; then µs per million float32 partials, each share's written
#: and the last one's reads of all) and the memory's effective bytes per µs (L2 included)
_T_KB = 0.638
_S192 = 0.942
_S128 = 0.847
_S64 = 0.615
_T_UNIT = 7.0
_T_SPLIT = 4.5
_T_SHARE = 5.0
_BW = 7.63e6
_L2 = 50 << 20  # bytes of L2: an A of more than half of it is read again for each column of tiles
_SPEED = {256: 1.0, 192: _S192, 128: _S128, 64: _S64}


def model_us(M: int, N: int, K: int, dtype: str, bn: int, split: int, sms: int = 132) -> float:
    """Modelled µs of ``128 x bn`` tiles with ``split`` shares of K on ``sms`` SMs: waves of work
    units, each its k-blocks at the tile's speed plus a fill and a store; at least the bytes
    moved (B once, C, A once or, when it is larger than half the L2, once per column of tiles)
    over the memory's bandwidth; plus split-K's partials. K enters through its
    k-block count only (every K of a count shares the tiles). Fitted on bf16; an fp8 k-block
    (128 elements: twice the MACs at twice the rate) is taken to cost the same."""
    return _cost(M, N, K, dtype, bn, split, sms)[0]


def _cost(M: int, N: int, K: int, dtype: str, bn: int, split: int, sms: int) -> tuple[float, float]:
    """``(model_us, the waves of work units alone)``: the key the choices minimize, ties
    (memory-bound shapes, where every width meets the floor) going to the least computed (the
    least padding)."""
    kb = -(-K // _bk(dtype))
    cols = -(-N // bn)
    speed = _SPEED[bn]
    units = -(-M // 128) * cols * split
    compute = -(-units // sms) * (-(-kb // split) * _T_KB * (bn / 256) / speed + _T_UNIT)
    a_bytes = M * kb * 128
    reads = cols if a_bytes > _L2 // 2 else 1  # A from L2 again, or once per column of tiles
    t = max(compute, (a_bytes * reads + N * kb * 128 + M * N * 2) / _BW)
    if split > 1:
        t += _T_SPLIT + _T_SHARE * M * N * split / 1e6
    return t, compute


@functools.lru_cache(maxsize=4096)
def _choose(
    M: int, N: int, K: int, dtype: str, sms: int, trans_b: bool, split: int | None
) -> tuple[int, int]:
    """The ``(BN, split)`` pair ``_cost`` finds best for more than 64 rows (``split``: fixed, or
    None for 1, 2, 4 or 8 shares of at least 16 k-blocks), remembered per problem."""
    # ``min`` over the pairs of ``_cost``, with what does not depend on M computed once per
    # (N, K) class (``_pairs``): a new M of a serving loop pays 16 products and comparisons (the
    # test checks it against ``_cost``)
    a_row, b_bytes, pairs = _pairs(N, K, dtype, trans_b, split)
    rows = -(-M // 128)
    a_bytes = M * a_row
    big_a = a_bytes > _L2 // 2
    rest = b_bytes + M * N * 2  # bytes of B and C
    share = _T_SHARE * M * N  # split-K's partials, times the shares / 1e6
    best, best_key = (0, 0), (float("inf"), 0.0)
    for w, sp, units, per_unit, cols in pairs:
        compute = -(-(rows * units) // sms) * per_unit
        t = max(compute, (a_bytes * (cols if big_a else 1) + rest) / _BW)
        if sp > 1:
            t += _T_SPLIT + share * sp / 1e6
        if (t, compute) < best_key:
            best, best_key = (w, sp), (t, compute)
    return best


@functools.lru_cache(maxsize=1024)
def _pairs(N: int, K: int, dtype: str, trans_b: bool, split: int | None) -> tuple[int, int, tuple]:
    """``_choose``'s terms that do not depend on M: the bytes of a row of A's k-blocks and of B,
    and per ``(BN, split)`` pair its column tiles times shares, the µs of one work unit and its
    column tiles."""
    kb = -(-K // _bk(dtype))
    splits = (split,) if split is not None else tuple(s for s in (1, 2, 4, 8) if s == 1 or kb // s >= 16)
    pairs = []
    for sp in splits:
        kbs = -(-kb // sp)
        for w in _widths(trans_b):
            cols = -(-N // w)
            pairs.append((w, sp, cols * sp, kbs * _T_KB * (w / 256) / _SPEED[w] + _T_UNIT, cols))
    return kb * 128, N * kb * 128, tuple(pairs)


def _widths(trans_b: bool) -> tuple[int, ...]:
    return (256, 128, 64) if trans_b else (256, 192, 128, 64)


def config(
    M: int,
    N: int,
    K: int,
    dtype: str,
    sms: int = 132,
    trans_b: bool = False,
    split_k: int = 1,
    scales: str = "tensor",
) -> dict:
    """The tile set for one problem: for more than 64 rows, ``128 x BN`` tiles with the ``BN``
    (256, 192, 128 or 64) that ``model_us`` finds fastest at this split (it weighs the last
    wave's idle SMs, the padding of a partial tile and the narrower tiles' lower speed); ``64 x
    BN`` tiles for at most 64 rows (decode) with the widest ``BN`` that still gives every SM
    work; the TMA-store epilogue when C's rows are 16-byte aligned (else the checked register
    stores). A function of the shape's class only, so shapes share compiled kernels (at most
    four widths per split). ``trans_b``: B is a row-major ``(K, N)`` matrix (read N-major; BN
    256, 128 or 64). ``split_k > 1``: each tile's k-blocks are shared by ``split_k`` work units;
    the last of a tile's units to finish sums their float32 partials in share order and stores
    C (``SPLIT_K`` with the ``"tma"`` / ``"direct"`` epilogue; partials of more than
    ``SPLIT_SPACE_MAX`` floats: each unit adds into a float32 C atomically, ``EPI="atomic"``),
    for shapes with fewer tiles than SMs (the calls choose it by ``auto_split_k``;
    docs/kernels.md, "Split-K"). ``scales="row"``: fp8 with one scale per row of A and per column of B;
    ``"block"``: one per row of A and 128 of K, one per 128 x 128 block of B (``BN`` at most 128)."""
    if not isinstance(split_k, int) or isinstance(split_k, bool) or not 1 <= split_k <= 64:
        raise ValueError(f"split_k: expected an int from 1 to 64, got {split_k!r}")
    bm = 64 if M <= 64 else 128
    if bm == 128:
        best = _choose(M, N, K, dtype, sms, trans_b, None)
        bn = best[0] if best[1] == split_k else _choose(M, N, K, dtype, sms, trans_b, split_k)[0]
    else:
        rows = -(-M // bm)
        bn = 64
        for cand in (256, 128):
            if rows * -(-N // cand) * 4 >= sms * 3:
                bn = cand
                break
    if scales == "block":  # a tile lies in one 128-column block of B's scales
        bn = min(bn, 128)
    # as many stages as fit beside the C staging tiles (16 KiB per consumer) and the alignment
    # slack, at most 8: 4 of 128 x 256 or 128 x 192, 6 of 128 x 128, 8 of 128 x 64, 5 of 64 x 256
    stages = min(8, (_SMEM - 1024 - (bm // 64) * 16384) // ((bm + bn) * 128))
    epi = "tma" if N % 8 == 0 else "direct"
    loader = {"LOADER": "cp"} if not trans_b and cp_rows(K, dtype) else {}
    if split_k > 1 and split_floats(M, N, bm, bn, split_k) > SPLIT_SPACE_MAX:
        epi = "atomic"  # partials of more than 256 MiB: the shares add atomically instead
    cfg = dict(BM=bm, BN=bn, STAGES=stages, GROUP_M=8, EPI=epi, SMS=sms, **loader)
    if trans_b:
        cfg["TRANS_B"] = True
    if split_k > 1:
        cfg["SPLIT_K"] = split_k
    if scales != "tensor":
        cfg["SCALES"] = scales
    return cfg


@functools.cache
def _kernel(dtype: str, tiles: tuple) -> Any:
    from tirx.runtime.ready import compile_ready

    # a new process with the kernel in the disk cache neither imports nor runs the script
    return compile_ready("tirx.kernels.hopper.matmul:make", dtype, **dict(tiles))


#: whether ``config`` takes the cp.async loads for rows TMA reads slowly (``cp_rows``). Off
#: until they have run on a GPU (their bit-equality test and timings are owed:
#: ``bash tools/device_owed.sh cp``); ``TIRX_GEMM_CP_LOADS=1`` turns them on
CP_LOADS: bool = os.environ.get("TIRX_GEMM_CP_LOADS", "0") == "1"


def cp_rows(K: int, dtype: str) -> bool:
    """Whether rows of ``K`` elements start 16 modulo 32 bytes apart, which TMA reads at about
    half speed (4096 x 4096 x 5000 at 0.55 of cuBLAS, x 5008 at 0.97, measured on an H100,
    docs/benchmarks.md "Row pitch"), and ``CP_LOADS`` is on: ``config`` then has A and a K-major
    B copied with ``cp.async`` (``matmul_sm90``'s ``LOADER="cp"``)."""
    return CP_LOADS and (K * (1 if dtype in _FP8 else 2)) % 32 != 0


def tiles(M: int, N: int, cfg: dict) -> int:
    """Output tiles of ``config``'s tile set over an ``M x N`` product."""
    return -(-M // cfg["BM"]) * -(-N // cfg["BN"])


def _bk(dtype: str) -> int:
    """Elements of K a k-block takes: one 128-byte swizzle row."""
    return 128 if dtype in _FP8 else 64


@functools.lru_cache(maxsize=4096)
def gemv_config(N: int, sms: int = 132) -> tuple[int, int, int]:
    """``(block, unroll, split)`` of the decode GEMV for a weight of ``N`` rows: one warp per row
    where that gives every SM at least 24 streaming warps, else a row's steps shared by 2 or 4
    warps (a function of N's class only: weights share compiled kernels)."""
    for split in (1, 2, 4):
        if N * split >= sms * 24:
            return 128, 4, split
    return 128, 4, 4


@functools.lru_cache(maxsize=4096)
def decode_path(M: int, N: int, K: int, dtype: str, sms: int = 132) -> str:
    """Which kernel takes a product of few rows (measured on an H100, docs/benchmarks.md,
    "Decode GEMV"): ``"gemv"`` (CUDA cores, 1-2 rows: the fastest there), ``"mma"``
    (``mma.sync`` GEMV, 3-8 rows, where the wgmma tiles would fill less than three quarters of
    the SMs) or ``"tiles"`` (the wgmma kernel)."""
    if dtype not in _HALF:
        return "tiles"
    if M <= GEMV_MAX_M:
        return "gemv"
    if M <= MMA_GEMV_MAX_M:
        cfg = config(M, N, K, dtype, sms)
        if tiles(M, N, cfg) * 4 < sms * 3:
            return "mma"
    return "tiles"


#: Where the descriptors of A and C are written (docs/kernels.md, "Descriptors written on the
#: device"). ``True``: on the device (``matmul_sm90``'s ``ROWS_ON_DEVICE``: each CTA patches a
#: template's address and row count), so a call at a new M or on new addresses encodes nothing
#: on the host (19.8 µs a new-M ``linear`` call against 49.4 on the H200 host), and the kernel
#: pays 0.4-2.3 µs for it (1-11%). ``False``: the host encodes them. ``None`` (the default):
#: both, by what the call has seen: a call on addresses and sizes seen once before takes the
#: host's descriptors (remembered, so the repeated call runs the faster kernel), any other
#: the device's (a serving loop's new M). ``TIRX_GEMM_ROWS_ON_DEVICE=1`` / ``=0`` force it.
ROWS_ON_DEVICE: bool | None = {"1": True, "0": False}.get(os.environ.get("TIRX_GEMM_ROWS_ON_DEVICE", ""))

#: (warps, unroll) of the tensor-core GEMV: 16 warps of 2 steps were fastest on the H100
MMA_GEMV = (16, 2)

#: rows of A up to which ``linear`` / a K-major ``matmul`` (fp16 / bf16, past the GEMVs) take the
#: swapped product (``swap_config``; at 128 rows it ties with the 128-row tiles, measured)
SWAP_MAX_M = 112


@functools.lru_cache(maxsize=4096)
def swapped(
    M: int, N: int, dtype: str, trans_b: bool, scaled: bool, split_k: int | None, sms: int | None = None
) -> bool:
    """Whether a call takes the swapped product: ``MMA_GEMV_MAX_M < M <= SWAP_MAX_M`` rows of a
    fp16 / bf16 A against a K-major B, split-K not asked for, and B's rows make one wave of at
    least a fifth of the SMs (``sms``; None: device 0's) in ``swap_config``'s tiles. Measured
    on an H100: more tiles than SMs run slower than the wider tiles (100 x 14336 x 4096: 224
    tiles, 47.8 µs against 45.7; 40 x 28672 x 4096: 448, 86.8 against 82.5), and few tiles
    with a long K slower than split-K (24 x 1024 x 8192: 16 tiles, 19.0 µs against 15.5). The
    call's key and its plan both ask this (the plan's descriptors depend on the answer)."""
    if not (MMA_GEMV_MAX_M < M <= SWAP_MAX_M and dtype in _HALF and not trans_b and not scaled):
        return False
    if split_k not in (None, 1):
        return False
    if sms is None:
        sms = sm_count(0)
    tiles = -(-N // (128 if M <= 16 else 64))
    return tiles <= sms and tiles * 5 >= sms


@functools.lru_cache(maxsize=256)
def swap_config(M: int, sms: int = 132) -> dict:
    """The tile set of the swapped product ``C^T = B A^T`` for a few rows (9-112): B's rows fill
    the wgmma tiles' 64-row side (128 of them for at most 16 rows of A, else 64: twice the
    CTAs), A's rows a ``BN`` of ``M`` rounded up to 16, two k-blocks a stage (half the
    consumer's iterations and barrier round trips per byte: a CTA's loop, not the memory, sets
    the pace there), as many stages as fit (at most 8), C stored transposed from registers.
    Measured on an H100 against the tiles ``config`` picks (docs/benchmarks.md, "Skinny M: a timeline, and the
    swapped product"), torch/tirx at N = K = 4096: 9 rows 0.477 -> 0.716, 16 rows 0.556 ->
    0.746, 32 rows 0.569 -> 0.655, 64 rows 0.623 -> 0.670, 65 rows 0.616 -> 0.798, 80 rows 0.578
    -> 0.678, 100 rows 0.682 -> 0.763 (128 rows 0.795 / 0.801: a tie); 16 x 4096 x 14336 0.742
    -> 0.932."""
    bn = max(16, -(-M // 16) * 16)
    bm = 128 if M <= 16 else 64
    stages = min(8, (_SMEM - 1024) // (2 * (bm + bn) * 128))
    return dict(BM=bm, BN=bn, STAGES=stages, GROUP_M=8, EPI="direct", SMS=sms, TRANS_C=True, KPACK=2)


@functools.cache
def _gemv(dtype: str, M: int, shape: tuple[int, ...], mma: bool = False) -> Any:
    from tirx.runtime.ready import compile_ready

    maker = "make_gemv_mma" if mma else "make_gemv"
    return compile_ready(f"tirx.kernels.hopper.gemv:{maker}", dtype, M, *shape)


@functools.lru_cache(maxsize=4096)
def auto_split_k(M: int, N: int, K: int, dtype: str, sms: int = 132, trans_b: bool = False) -> int:
    """The split-K the calls choose. More than 64 rows: the ``(BN, split)`` pair, split 1 to 8
    with at least 16 k-blocks a share, that ``model_us`` finds fastest (1,024 x 1,024 x 65,536:
    128 x 256 tiles in 4 shares, 1.5x faster than one share of 128 x 64, measured on an H100).
    At most 64 rows: only where the tiles fill at most a quarter of the SMs and ``K`` is long
    (at least 32 k-blocks), as many shares as fill the SMs, at most 8, each of at least 16
    k-blocks (128 x 1024 x 16384, 16 tiles, runs 2.9x faster with 8 shares; at 64 tiles, 16 x
    4096 x 4096, 2 or 4 shares summed in the kernel are no faster: 20.2-22.6 µs against 20.7)."""
    kblocks = -(-K // _bk(dtype))
    if M > 64:
        return _choose(M, N, K, dtype, sms, trans_b, None)[1]
    cfg = config(M, N, K, dtype, sms)
    n = tiles(M, N, cfg)
    if n * 4 > sms or kblocks < 32:
        return 1
    return max(1, min(8, sms // n, kblocks // 16))


@functools.lru_cache(maxsize=4096)
def _plan(
    M: int, N: int, K: int, dtype: str, trans_b: bool, device: int, split_k: int = 1, scales: str = "tensor",
    rows_on_device: bool = False,
) -> tuple:  # fmt: skip
    """(kernel, BM, BN, EPI, SPLIT_K, LOADER) of one problem, remembered: a shape seen before costs a lookup."""
    cfg = config(M, N, K, dtype, sm_count(device), trans_b, split_k, scales)
    if rows_on_device and "LOADER" not in cfg:  # (cp.async reads A by address: no descriptor)
        cfg["ROWS_ON_DEVICE"] = True
    return (
        _kernel(dtype, tuple(sorted(cfg.items()))), cfg["BM"], cfg["BN"], cfg["EPI"], cfg.get("SPLIT_K", 1),
        cfg.get("LOADER", "tma"),
    )  # fmt: skip


def _gemm(
    a: Any,
    b: Any,
    out: Any,
    dtype: str,
    trans_b: bool = False,
    scales: tuple = (),
    split_k: int | None = None,
    scale_mode: str = "tensor",
    cfg: dict | None = None,
) -> Any:
    """``out = a @ b^T`` for row-major ``a (M, K)``, ``b (N, K)``, ``out (M, N)`` (checked); with
    ``trans_b``, ``out = a @ b`` for a row-major ``b (K, N)``; ``split_k``: see ``config``
    (None: ``auto_split_k``'s choice);
    ``scale_mode`` (fp8): ``"tensor"`` (one scale each), ``"row"`` (one per row of ``a`` and of
    ``b``) or ``"block"`` (``a``: one per row and 128 of K; ``b``: one per 128 x 128 block); ``cfg``: a
    tile set of ``matmul_sm90`` instead of ``config``'s (``tools/bench/gemm_explore.py``)."""
    M, K = a.shape
    N = b.shape[1] if trans_b else b.shape[0]
    if M == 0 or N == 0:
        return out
    if K == 0:
        return out.zero_()
    if cfg is not None:
        return _launch(
            _prepare(a, b, out, M, N, K, dtype, trans_b, bool(scales), split_k, scale_mode, cfg),
            a,
            b,
            out,
            M,
            N,
            K,
            scales,
        )
    # a call seen before (the same tensors' addresses and sizes: a layer's weight, the caching
    # allocator's blocks) takes its kernel and descriptors from one lookup; with the descriptors
    # of A and C written on the device, their addresses are not part of the plan
    # (the swapped product's descriptors are of B and A: always the host's, keyed by the addresses)
    # (so are cp.async loads' plans: A's address is a launch argument of the plan)
    mode = (
        False
        if swapped(M, N, dtype, trans_b, bool(scales), split_k) or (not trans_b and cp_rows(K, dtype))
        else ROWS_ON_DEVICE
    )
    pb = b.data_ptr()
    if mode is not True:
        key = (
            a.data_ptr(),
            pb,
            out.data_ptr(),
            M,
            N,
            K,
            dtype,
            trans_b,
            bool(scales),
            split_k,
            scale_mode,
            False,
        )
        plan = _CALLS.get(key)
        if plan is not None:
            return _launch(plan, a, b, out, M, N, K, scales)
        if mode is False or _SEEN.pop(key, None) is not None:  # the second sighting: encoded
            plan = _CALLS.put(
                key, _prepare(a, b, out, M, N, K, dtype, trans_b, bool(scales), split_k, scale_mode, None)
            )
            return _launch(plan, a, b, out, M, N, K, scales)
        _SEEN.put(key, True)
    key = (0, pb, 0, M, N, K, dtype, trans_b, bool(scales), split_k, scale_mode, True)
    plan = _CALLS.get(key)
    if plan is None:
        plan = _CALLS.put(
            key, _prepare(a, b, out, M, N, K, dtype, trans_b, bool(scales), split_k, scale_mode, None, True)
        )
    return _launch(plan, a, b, out, M, N, K, scales)


_CALLS: Bounded = Bounded(4096)
#: the addresses and sizes of calls seen once (``ROWS_ON_DEVICE`` None: a second sighting encodes)
_SEEN: Bounded = Bounded(4096)


def _prepare(
    a: Any, b: Any, out: Any, M: int, N: int, K: int, dtype: str, trans_b: bool, scaled: bool,
    split_k: int | None, scale_mode: str, cfg: dict | None, rows_on_device: bool = False,
) -> tuple:  # fmt: skip
    """What a call launches: ``("gemv", kernel)`` or ``(epi, kernel, TA, TB, TC, rows_on_device)``
    (TC: the TMA-store epilogue's descriptor of ``out``, else None; with ``rows_on_device``, TA
    and TC are the addresses of the templates the kernel writes A's and C's descriptors from).
    A function of the tensors' addresses (not A's and C's with ``rows_on_device``) and the sizes
    only (descriptors encode nothing else), so ``_gemm`` remembers it per call."""
    dev = a.device.index or 0
    if cfg is not None:
        k = _kernel(dtype, tuple(sorted(cfg.items())))
        bm, bn, epi, split = cfg["BM"], cfg["BN"], cfg.get("EPI", "tma"), cfg.get("SPLIT_K", 1)
        rows_on_device = bool(cfg.get("ROWS_ON_DEVICE"))
        loader = cfg.get("LOADER", "tma")
    else:
        if M <= MMA_GEMV_MAX_M and not trans_b and split_k in (None, 1) and not scaled:
            # decode: rows of b streamed by warps (the sizes come from the shapes)
            path = decode_path(M, N, K, dtype, sm_count(dev))
            if path == "gemv":
                return ("gemv", _gemv(dtype, M, gemv_config(N, sm_count(dev))))
            if path == "mma":
                return ("gemv", _gemv(dtype, M, MMA_GEMV, True))
        if swapped(M, N, dtype, trans_b, scaled, split_k):
            cfg = swap_config(M, sm_count(dev))
            return _prepare(a, b, out, M, N, K, dtype, trans_b, scaled, split_k, scale_mode, cfg)
        if split_k is None:
            split_k = auto_split_k(M, N, K, dtype, sm_count(dev), trans_b)
        k, bm, bn, epi, split, loader = _plan(
            M, N, K, dtype, trans_b, dev, split_k, scale_mode, rows_on_device
        )
    bk = _bk(dtype)
    if cfg is not None and cfg.get("TRANS_C"):
        # the swapped product C^T = B A^T (a few rows: B's rows fill the wgmma tiles' 64-row
        # side, A's rows their narrow N); the kernel's sizes are (N, M, K), C stored transposed
        if loader == "cp":
            ta, tb = b.data_ptr(), a.data_ptr()
        else:
            ta = tensor_map(b, N, K, (bm, bk), dtype)
            tb = tensor_map(a, M, K, (bn, bk), dtype)
        return (epi, k, ta, tb, None, False, _split_need(N, M, bm, bn, split, epi), True)
    if loader == "cp":  # A and B copied by address (``_gemm`` keys such a plan by the addresses)
        tc = tensor_map(out, M, N, (64, 64), dtype_name(out)) if epi == "tma" else None
        return (epi, k, a.data_ptr(), b.data_ptr(), tc, False, _split_need(M, N, bm, bn, split, epi), False)
    if rows_on_device:  # the templates' addresses (kept alive by map_template's cache)
        ta = map_template(a, M, K, (bm, bk), dtype).data_ptr()
        tc = map_template(out, M, N, (64, 64), dtype_name(out)).data_ptr() if epi == "tma" else None
    else:
        ta = tensor_map(a, M, K, (bm, bk), dtype)
        tc = tensor_map(out, M, N, (64, 64), dtype_name(out)) if epi == "tma" else None
    tb = tensor_map(b, K, N, (64, 64), dtype) if trans_b else tensor_map(b, N, K, (bn, bk), dtype)
    return (epi, k, ta, tb, tc, rows_on_device, _split_need(M, N, bm, bn, split, epi), False)


def _split_need(M: int, N: int, bm: int, bn: int, split: int, epi: str) -> tuple[int, int] | None:
    """Split-K summed in the kernel: the float32 partials and the int32 tile counters a launch of
    the kernel's ``M x N`` (C's transpose for the swapped product) needs; None otherwise."""
    if split == 1 or epi == "atomic":
        return None
    return split_floats(M, N, bm, bn, split), -(-M // bm) * -(-N // bn) * (bm // 64)


def _launch(plan: tuple, a: Any, b: Any, out: Any, M: int, N: int, K: int, scales: tuple) -> Any:
    """Launch a ``_prepare`` plan on the current stream."""
    epi, k = plan[0], plan[1]
    if epi == "gemv":
        k(a, b, out)
        return out
    # with the descriptors written on the device: A's address and this stream's descriptor space
    extra = (
        (a.data_ptr(), per_stream(a.device.index or 0, "gemm_maps", _map_space).data_ptr()) if plan[5] else ()
    )
    if plan[6] is not None:  # split-K summed in the kernel: this stream's partials and counters
        extra = (*extra, *split_space(a.device.index or 0, *plan[6]))
    if plan[7]:  # the swapped product: the kernel's M is N
        M, N = N, M
    if epi == "tma":
        k(M, N, K, plan[2], plan[3], plan[4], out, *scales, *extra)
    elif epi == "atomic":  # the shares add into a zeroed float32 sum, converted once
        import torch

        acc = torch.zeros(tuple(out.shape), dtype=torch.float32, device=out.device)  # (swapped: C's own)
        k(M, N, K, plan[2], plan[3], acc, *scales, *extra)
        out.copy_(acc)
    else:
        k(M, N, K, plan[2], plan[3], out, *scales, *extra)
    return out


#: the most float32 partials split-K sums in the kernel (256 MiB); a split with more (only
#: a forced ``split_k`` on a large product: the calls split where there are few tiles) adds its
#: shares atomically into a float32 sum instead (``EPI="atomic"``)
SPLIT_SPACE_MAX = 1 << 26


def split_floats(M: int, N: int, bm: int, bn: int, split: int) -> int:
    """The float32 partials of split-K summed in the kernel: a ``bm x bn`` slot per tile and share."""
    return split * -(-M // bm) * -(-N // bn) * bm * bn


def split_space(index: int, floats: int, counters: int) -> tuple[int, int]:
    """The addresses of this stream's split-K partials (at least ``floats`` float32) and tile
    counters (at least ``counters`` int32, zero between launches: each tile's last share resets
    its own), grown to the largest launch seen. A launch on the same stream runs after the one
    before it, so one space serves every launch of a stream. A grown space keeps the buffers it
    replaced (at most twice the largest: the sizes are powers of two): a CUDA graph captured
    before the growth still launches on their addresses."""
    # [device, partials, counters, (their addresses), replaced buffers, (their sizes)]
    box = per_stream(index, "gemm_split", lambda device: [device, None, None, (0, 0), [], (0, 0)])
    have = box[5]
    if have[0] < floats or have[1] < counters:  # (a repeat: two int comparisons)
        import torch

        if have[0] < floats:  # a power of two: few regrowths
            if box[1] is not None:
                box[4].append(box[1])
            box[1] = torch.empty(
                max(1 << 20, 1 << (floats - 1).bit_length()), dtype=torch.float32, device=box[0]
            )
        if have[1] < counters:
            if box[2] is not None:
                box[4].append(box[2])
            box[2] = torch.zeros(
                max(4096, 1 << (counters - 1).bit_length()), dtype=torch.int32, device=box[0]
            )
        box[3] = (box[1].data_ptr(), box[2].data_ptr())
        box[5] = (box[1].numel(), box[2].numel())
    return box[3]


def _map_space(device: Any) -> Any:
    """``ROWS_ON_DEVICE``'s descriptor space of one stream: two 128-byte descriptors per CTA of
    the persistent grid (``(SMS * 32,)`` uint64, as ``matmul_sm90`` declares it)."""
    import torch

    return torch.empty(sm_count(device.index) * 32, dtype=torch.uint64, device=device)


def _check_pair(a: Any, b_nk: Any, K: int, dtype: str, names: tuple[str, str]) -> None:
    esz = 1 if dtype in _FP8 else 2
    if (K * esz) % 16:
        raise ValueError(
            f"{names[0]}: K = {K} must be a multiple of {16 // esz} (TMA reads rows 16-byte aligned)"
        )
    for name, t in zip(names, (a, b_nk)):
        if t.data_ptr() % 16:
            raise ValueError(f"{name}: the tensor's address must be 16-byte aligned (TMA)")
    if a.device != b_nk.device:
        raise ValueError(f"{names[1]}: on {b_nk.device}, but {names[0]} is on {a.device}")


def _out(out: Any, M: int, N: int, dtype: str, like: Any) -> Any:
    import torch

    if out is None:
        return torch.empty((M, N), dtype=getattr(torch, dtype), device=like.device)
    got = check_cuda("out", out, (dtype,), 2)
    if tuple(out.shape) != (M, N) or not out.is_contiguous():
        raise ValueError(f"out: expected a contiguous ({M}, {N}) {got} tensor, got shape {tuple(out.shape)}")
    if out.data_ptr() % 16:
        raise ValueError("out: the tensor's address must be 16-byte aligned")
    return out


def _rows(name: str, t: Any) -> Any:
    """``t`` as a row-major 2-d matrix (leading dimensions flattened; no copy)."""
    if not t.is_contiguous():
        raise ValueError(f"{name}: expected a contiguous (row-major) tensor, got strides {tuple(t.stride())}")
    if t.dim() == 2:
        return t  # already a matrix (no new view: a microsecond a call)
    rows = 1
    for d in t.shape[:-1]:
        rows *= d
    return t.reshape(rows, t.shape[-1])


@takes_arrays("x", "weight", "out")
def linear(x: Any, weight: Any, *, out: Any = None) -> Any:
    """``x @ weight.T`` (``torch.nn.functional.linear`` without bias): ``x (..., K)`` and
    ``weight (N, K)``, both row-major fp16 or bf16 on one CUDA device; the result has shape
    ``(..., N)`` (``out``, when given, a contiguous ``(prod(...), N)`` tensor)."""
    dt = check_cuda("x", x, _HALF)
    check_cuda("weight", weight, (dt,), 2)
    if x.dim() < 1 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"weight: shape {tuple(weight.shape)} does not match x's K = {x.shape[-1]}")
    a = _rows("x", x)
    w = _rows("weight", weight)
    _check_pair(a, w, a.shape[1], dt, ("x", "weight"))
    res = _out(out, a.shape[0], w.shape[0], dt, x)
    _gemm(a, w, res, dt)
    return res if out is not None else res.view(*x.shape[:-1], w.shape[0])


@takes_arrays("a", "b", "out")
def matmul(a: Any, b: Any, *, out: Any = None) -> Any:
    """``a @ b`` for ``a (M, K)`` row-major and ``b (K, N)`` row-major (N a multiple of 8) or
    stored K-major (``b.stride() == (1, K)``: the transpose of a row-major ``(N, K)`` tensor,
    such as a linear layer's weight ``w.t()``; any N), fp16 or bf16; returns ``(M, N)``."""
    dt = check_cuda("a", a, _HALF, 2)
    check_cuda("b", b, (dt,), 2)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"b: shape {tuple(b.shape)} does not match a's K = {a.shape[1]}")
    if not a.is_contiguous():
        raise ValueError(f"a: expected a row-major tensor, got strides {tuple(a.stride())}")
    K, N = b.shape
    bt = b.t()
    if bt.is_contiguous():  # K-major (this also takes a (K, 1) or (1, N) b stored either way)
        _check_pair(a, bt, K, dt, ("a", "b"))
        res = _out(out, a.shape[0], N, dt, a)
        return _gemm(a, bt, res, dt)
    if not b.is_contiguous():
        raise ValueError(
            f"b: expected a row-major (K, N) tensor or the transpose of a row-major (N, K) one, got "
            f"strides {tuple(b.stride())}"
        )
    if N % 8:
        raise ValueError(
            f"b: a row-major b needs N a multiple of 8 (TMA reads rows 16-byte aligned), got N = {N}; "
            "pass b as the transpose of a row-major (N, K) tensor for any N"
        )
    _check_pair(a, b, K, dt, ("a", "b"))
    res = _out(out, a.shape[0], N, dt, a)
    return _gemm(a, b, res, dt, trans_b=True)


@takes_arrays("a", "b", "scale_a", "scale_b", "out")
def scaled_matmul(a: Any, b: Any, scale_a: Any, scale_b: Any, *, out: Any = None) -> Any:
    """``scale_a * scale_b * (a @ b)`` in bf16 for fp8 (e4m3 / e5m2) ``a (M, K)`` row-major
    and ``b (K, N)`` stored K-major, with float32 scales on the device: per tensor (one element
    each), rowwise (``scale_a (M, 1)``, ``scale_b (1, N)``: element ``(i, j)`` times
    ``scale_a[i] * scale_b[j]``), the arguments of
    ``torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16)``; or per block as
    DeepGEMM scales (``scale_a (M, ceil(K / 128))``: one per row and 128 elements of K;
    ``scale_b (ceil(K / 128), ceil(N / 128))``: one per 128 x 128 block of ``b``), each k-block's
    product scaled before it is added."""
    dt = check_cuda("a", a, _FP8, 2)
    check_cuda("b", b, (dt,), 2)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"b: shape {tuple(b.shape)} does not match a's K = {a.shape[1]}")
    M, N, K = a.shape[0], b.shape[1], a.shape[1]
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        check_cuda(name, s, ("float32",))
    kb = -(-K // 128)
    shapes = (tuple(scale_a.shape), tuple(scale_b.shape))
    if scale_a.numel() == 1 and scale_b.numel() == 1:
        mode, scales = "tensor", (scale_a.reshape(-1), scale_b.reshape(-1))
    elif shapes == ((M, 1), (1, N)):
        mode, scales = "row", (scale_a.reshape(-1), scale_b.reshape(-1))
    elif shapes == ((M, kb), (kb, -(-N // 128))):
        mode, scales = "block", (scale_a, scale_b)
    else:
        raise ValueError(
            f"scale_a, scale_b: expected one float32 each (per tensor), ({M}, 1) and (1, {N}) (rowwise) or "
            f"({M}, {kb}) and ({kb}, {-(-N // 128)}) (per 128 of K / 128 x 128 block), got {shapes[0]} and {shapes[1]}"
        )
    if mode != "tensor":
        for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
            if not s.is_contiguous():
                raise ValueError(f"{name}: expected a contiguous tensor, got strides {tuple(s.stride())}")
    if not a.is_contiguous():
        raise ValueError(f"a: expected a row-major tensor, got strides {tuple(a.stride())}")
    bt = b.t()
    if not bt.is_contiguous():
        raise ValueError(f"b: expected K-major storage (strides (1, {b.shape[0]})), got {tuple(b.stride())}")
    _check_pair(a, bt, a.shape[1], dt, ("a", "b"))
    res = _out(out, a.shape[0], b.shape[1], "bfloat16", a)
    return _gemm(a, bt, res, dt, scales=scales, scale_mode=mode)
