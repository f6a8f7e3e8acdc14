"""``attention`` and ``attention_varlen`` on torch CUDA tensors: the host side of the attention
forward, whose kernel is ``tirx/kernels/hopper/attention.py`` (the script is the documentation
of how it is done).

Tile choice (``best_config``, ``config_for``, ``config_varlen``), the TMA descriptors of Q, K and
V (``plans``, ``launch_args``, ``varlen_maps``), the dynamic scheduler's tile counter, argument
checks that name the argument, and the calls. Kernels come from ``tirx.runtime.ready``: a new
process whose kernels are in the disk cache neither imports the script nor runs it.
"""

from __future__ import annotations

import functools
from typing import Any

from tirx.kernels._host import per_stream, takes_arrays
from tirx.runtime.bounded import Bounded

__all__ = ["attention", "attention_varlen", "best_config", "config_for", "config_varlen"]

_SCRIPT = "tirx.kernels.hopper.attention"


def best_config(D: int, causal: bool = False) -> dict:
    """Tiles and schedule measured best on the H200 (docs/benchmarks.md, "Attention"; paired,
    interleaved launches against torch's SDPA), all with ping-pong turns and the softmax
    overlapped with ``P V``. Head dim 128: ``128 x 128`` tiles, a 2-stage ring (two consumer
    warpgroups of 240 registers), the softmax's row max and sum as four chains; causal masks
    with the key blocks from the diagonal down (``REVERSE``: the mask in the peeled step only,
    +5 % over the forward order) and the dynamic persistent scheduler over the longest-first
    tile order (+4 % more; non-causal it is 3 % slower). Head dim 64: ``192 x 128`` tiles (three
    consumers of 160 registers: more softmax work in flight), 4 stages, the dynamic persistent
    scheduler (+2-5 % over one CTA per tile), four chains for causal masks only (non-causal: one
    chain, 3 % faster there)."""
    if D == 256:  # 64-key blocks: Q (64 KiB) and two stages of K and V (32 KiB each) fit
        # causal: one CTA per tile in the L2-grouped longest-first order (0.982 of SDPA against
        # the dynamic scheduler's 0.950 at 2x16x4096); non-causal: one softmax chain (0.911
        # against four chains' 0.898 at 4x16x2048; H100, docs/benchmarks.md); REVERSE needs BN
        # a multiple of BM
        if causal:
            return dict(BM=128, BN=64, STAGES=2, PINGPONG=True, OVERLAP=True, CHAINS=4, SCHED="lpt")
        return dict(BM=128, BN=64, STAGES=2, PINGPONG=True, OVERLAP=True, CHAINS=1)
    if D == 64:
        return dict(
            BM=192, BN=128, STAGES=4, PINGPONG=True, OVERLAP=True, CONSUMER_REGS=160, SCHED="dynamic",
            CHAINS=4 if causal else 1,
        )  # fmt: skip
    sched = {"SCHED": "dynamic", "REVERSE": True} if causal else {}
    return dict(BM=128, BN=128, STAGES=2, PINGPONG=True, OVERLAP=True, CHAINS=4, **sched)


def config_for(S: int, D: int, causal: bool = False) -> dict:
    """``best_config``, with tiles that suit the sequence (the tile sweep on an H100,
    docs/benchmarks.md, "Attention tile sweep"): ``128 x 128`` tiles (the head-dim 128 form) below
    the 192-row tile of head dim 64 and for causal head dim 64 below 1,024 keys (0.89 of SDPA
    at 512 keys against 0.81), ``64 x 64`` tiles with the dynamic scheduler for causal masks of
    at most 128 keys (0.84 against 0.75: twice the CTAs where one tile is a whole head) and below
    128 keys; head dim 256 keeps its ``128 x 64`` tiles from 128 keys on (causal below 2,048 keys
    with the dynamic scheduler: 0.862 of SDPA against the ``lpt`` order's 0.839 at 1,000). Shorter sequences or
    ones that are not a multiple of 8 are a ValueError naming ``q``."""
    if S % 8 or S < 64:
        raise ValueError(f"q: sequence length {S} is not supported (a multiple of 8, at least 64)")
    if S < 128 or (causal and S <= 128):
        return dict(BM=64, BN=64, STAGES=3, SCHED="dynamic") if causal else dict(BM=64, BN=64, STAGES=2)
    cfg = best_config(D, causal)
    if D == 256 and causal and S < 2048:  # the dynamic scheduler below 2,048 keys (the sweep:
        return dict(cfg, SCHED="dynamic")  # 8x8x1000x256 0.862 of SDPA against lpt's 0.839)
    if D == 256 or (max(cfg["BM"], cfg["BN"]) <= S and not (causal and S < 1024)):
        return cfg
    return best_config(128, causal)


def plans(B: int, H: int, S: int, D: int, dtype: str = "bfloat16", BM: int = 128, BN: int = 128):
    """Host TMA plans of Q (``BM x 64`` boxes) and K / V (``BN x 64`` boxes) over the
    ``(B * H * S, D)`` views, 128-byte swizzle."""
    from tirx.runtime.tma import TensorMapPlan

    rows = B * H * S
    return (
        TensorMapPlan(dtype, (rows, D), (BM, 64), 128),
        TensorMapPlan(dtype, (rows, D), (BN, 64), 128),
    )


def tile_counter(device, stream: int | None = None):
    """The ``SCHED="dynamic"`` tile counter for launches on one CUDA stream of a torch device
    (``stream``: a raw stream handle; None: the device's current stream): two int32 zeros, put
    back to zero by the last CTA of each launch, so launches in that stream's order share it.
    Launches that may run at the same time must not share a counter (their CTAs would take each
    other's tiles), hence one per stream; a kernel launched by hand on another stream than the
    current one needs ``tile_counter(device, that_stream)``."""
    import torch

    index = torch.device(device).index
    if index is None:
        index = torch.cuda.current_device()
    return _counter(index, stream)


def _counter(index: int, stream: int | None = None):
    """``tile_counter`` of device ``index`` (a call's: one raw-stream query and a lookup)."""
    return per_stream(index, "tile_counter", _zero_counter, stream)


def _zero_counter(device: Any) -> Any:
    import torch

    return torch.zeros(2, dtype=torch.int32, device=device)


def launch_args(q, k, v, o, *, BM: int, BN: int, SCHED: str = "grid", **_tiles) -> tuple:
    """The arguments of a compiled ``make_attention`` kernel for contiguous ``(B, H, S, D)``
    torch tensors (``k`` / ``v``: ``(B, HKV, S, D)`` for a kernel made with ``HKV``): the output
    ``o``, the TMA descriptors of Q, K and V over their ``(rows, D)`` matrices in ``BM`` / ``BN``
    boxes, and for ``"dynamic"`` the tile counter of the current stream, which the launch must
    use. Q, K and V reach the kernel through their descriptors only. The descriptors come from
    ``tirx.kernels._host.tensor_map``'s cache: a call on tensors at addresses seen before
    encodes nothing."""
    extra = (tile_counter(q.device),) if SCHED == "dynamic" else ()
    return (o, *_maps(q, k, v, BM, BN), *extra)


def _maps(q, k, v, BM: int, BN: int) -> tuple[bytes, bytes, bytes]:
    """The TMA descriptors of Q (``BM``-row boxes) and K / V (``BN``-row boxes) over their
    ``(rows, D)`` matrices (K / V: ``B * HKV * S`` rows for grouped-query attention)."""
    from tirx.kernels._host import dtype_name, tensor_map

    B, H, S, D = q.shape
    kv_rows = k.shape[0] * k.shape[1] * k.shape[2]
    dt = dtype_name(q)
    return (
        tensor_map(q, B * H * S, D, (BM, 64), dt),
        tensor_map(k, kv_rows, D, (BN, 64), dt),
        tensor_map(v, kv_rows, D, (BN, 64), dt),
    )


def run(kernel, q, k, v, o, **tiles) -> None:
    """Launch a compiled ``make_attention`` kernel on contiguous ``(B, H, S, D)`` torch tensors;
    ``tiles`` must include the kernel's ``BM`` / ``BN`` / ``SCHED`` (pass the same ``**tiles``:
    the tiles shape the TMA boxes, ``"dynamic"`` takes the tile counter)."""
    kernel(*launch_args(q, k, v, o, **tiles))


@functools.cache
def _compiled(B: int, H: int, S: int, D: int, causal: bool, dtype: str, tiles: tuple):
    """The compiled ``make_attention`` kernel (``tirx.runtime.ready``: no script run when cached)."""
    from tirx.runtime.ready import compile_ready

    return compile_ready(f"{_SCRIPT}:make_attention", B, H, S, D, causal, dtype, **dict(tiles))


@functools.cache
def _best(S: int, D: int, causal: bool) -> tuple[dict, tuple]:
    cfg = config_for(S, D, causal)
    return cfg, tuple(sorted(cfg.items()))


def _check_qkv(q, k, v, q_layout: str, kv_layout: str, same: tuple[int, ...]) -> str:
    """The checks ``attention`` and ``attention_varlen`` share: contiguous fp16 / bf16 CUDA
    tensors of one dtype laid out as ``q_layout`` / ``kv_layout`` (heads on axis 1, ``H`` a
    multiple of K / V's, the axes ``same`` equal to q's), K and V of one shape, head dim 64,
    128 or 256. Errors name the argument; returns the dtype name."""
    from tirx.kernels._host import check_cuda

    ndim = q_layout.count(",") + 1  # the layout's axes
    dt = check_cuda("q", q, ("float16", "bfloat16"), ndim)
    H = q.shape[1]
    for name, t in (("k", k), ("v", v)):
        check_cuda(name, t, (dt,), ndim)
        hkv = t.shape[1]
        if hkv < 1 or H % hkv or any(t.shape[i] != q.shape[i] for i in same):
            raise ValueError(
                f"{name}: shape {tuple(t.shape)} does not fit q's {tuple(q.shape)}: expected {kv_layout} "
                f"with HKV dividing H = {H}"
            )
    if k.shape != v.shape:
        raise ValueError(f"v: shape {tuple(v.shape)} differs from k's {tuple(k.shape)}")
    for name, t, layout in (("q", q, q_layout), ("k", k, kv_layout), ("v", v, kv_layout)):
        if not t.is_contiguous():
            raise ValueError(f"{name}: expected a contiguous {layout} tensor")
    if q.shape[-1] not in (64, 128, 256):
        raise ValueError(f"q: head dim {q.shape[-1]} is not supported (64, 128 or 256)")
    return dt


@takes_arrays("q", "k", "v")
def attention(q, k, v, causal: bool = False, **tiles):
    """``softmax(q k^T / sqrt(d)) v`` of contiguous ``(B, H, S, D)`` bf16 / fp16 torch tensors;
    ``k`` / ``v`` may have fewer heads, ``(B, HKV, S, D)`` with ``H % HKV == 0``: grouped-query
    (multi-query for ``HKV = 1``) attention, each group of ``H / HKV`` query heads reading one
    K / V head (as SDPA's ``enable_gqa``). ``tiles`` default to ``config_for(S, D, causal)``
    (``best_config``'s, no longer than the sequence); compiles once per shape and tile set. A
    call on tensors seen before costs one lookup for the kernel and the tensor maps, the
    output's allocation and the launch."""
    import torch

    # a call on tensors seen before takes its kernel and descriptors from one lookup, its checks
    # and tile choice skipped: the addresses, shapes, dtypes and strides decide both (a CUDA
    # address belongs to one allocation of one device in the process: unified addressing)
    try:
        seen = (
            q.data_ptr(), k.data_ptr(), v.data_ptr(), q.shape, k.shape, v.shape, q.dtype, k.dtype, v.dtype,
            q.stride(), k.stride(), v.stride(), causal, *tiles.items(),
        )  # fmt: skip
    except AttributeError:  # not tensors: the checks name the argument
        seen = None
    plan = _CALLS.get(seen)
    if plan is None:
        dt = _check_qkv(q, k, v, "(B, H, S, D)", "(B, HKV, S, D)", (0, 2, 3))
        H, hkv = q.shape[1], k.shape[1]
        if tiles:
            cfg, key = tiles, tuple(sorted(tiles.items()))
        else:
            cfg, key = _best(q.shape[2], q.shape[-1], causal)
        if hkv != H:  # grouped-query: the kernel's K / V rows come from HKV heads
            cfg, key = dict(cfg, HKV=hkv), tuple(sorted({**dict(key), "HKV": hkv}.items()))
        plan = _CALLS.put(seen, _call_plan(q, k, v, causal, dt, cfg, key))
    kern, maps, dynamic = plan
    o = torch.empty_like(q)
    if dynamic:  # the tile counter of the current stream
        kern(o, *maps, _counter(q.get_device()))
    else:
        kern(o, *maps)
    return o


_CALLS = Bounded(1024)


def _call_plan(q, k, v, causal: bool, dt: str, cfg: dict, key: tuple) -> tuple:
    """What an ``attention`` call launches: the compiled kernel, the descriptors of Q, K and V,
    and whether it takes the dynamic scheduler's counter (a function of the tensors' addresses,
    the sizes and the tiles only)."""
    kern = _compiled(*q.shape, causal, dt, key)
    # tiles left out are the kernel's defaults (128 x 128, one CTA per tile)
    return kern, _maps(q, k, v, cfg.get("BM", 128), cfg.get("BN", 128)), cfg.get("SCHED") == "dynamic"


def config_varlen(D: int, causal: bool = False) -> dict:
    """Tiles of the variable-length kernel: ``best_config``'s with one CTA per tile (the
    sequences' lengths are known on the device only); head dim 64 takes head dim 128's
    ``128 x 128`` tiles (the 192-row tile's three consumers of 160 registers spill with the
    offsets held)."""
    return {k: v for k, v in best_config(256 if D == 256 else 128, causal).items() if k != "SCHED"}


@functools.cache
def _compiled_varlen(H: int, D: int, causal: bool, dtype: str, tiles: tuple):
    """The compiled ``make_attention_varlen`` kernel."""
    from tirx.runtime.ready import compile_ready

    return compile_ready(f"{_SCRIPT}:make_attention_varlen", H, D, causal, dtype, **dict(tiles))


def varlen_maps(q, k, v, BM: int = 128, BN: int = 128) -> tuple[bytes, bytes, bytes]:
    """The TMA descriptors of the variable-length kernel: Q ``(tokens, H, D)`` and K / V
    ``(kv_tokens, HKV, D)`` as packed ``(tokens, heads * D)`` matrices in ``BM`` / ``BN``-row
    boxes of 64 columns."""
    from tirx.kernels._host import dtype_name, tensor_map

    dt = dtype_name(q)
    return (
        tensor_map(q, q.shape[0], q.shape[1] * q.shape[2], (BM, 64), dt),
        tensor_map(k, k.shape[0], k.shape[1] * k.shape[2], (BN, 64), dt),
        tensor_map(v, v.shape[0], v.shape[1] * v.shape[2], (BN, 64), dt),
    )


_VARLEN_CALLS = Bounded(1024)


@takes_arrays("q", "k", "v", "cu_seqlens_q", "cu_seqlens_k")
def attention_varlen(
    q, k, v, cu_seqlens_q, cu_seqlens_k=None, max_seqlen_q: int | None = None, causal: bool = False, **tiles
):
    """Attention over a batch of sequences of different lengths packed along the first axis
    (FlashAttention's ``flash_attn_varlen_func``): ``q`` is ``(tokens, H, D)``, ``k`` / ``v``
    ``(kv_tokens, HKV, D)`` (``H % HKV == 0``: grouped-query), contiguous bf16 / fp16 CUDA
    tensors; ``cu_seqlens_q`` holds ``batch + 1`` int32 offsets (sequence ``b`` is rows
    ``cu_seqlens_q[b]`` to ``cu_seqlens_q[b + 1]``), ``cu_seqlens_k`` the keys' (default: the
    same). ``max_seqlen_q`` must be at least the longest query sequence (the grid covers that
    many rows; the rows of a longer one it leaves out come out NaN; None: computed from the
    offsets, which waits for the device). ``causal``: key
    ``j`` of a sequence is seen by its query ``i`` when ``j <= i`` (needs the queries' offsets
    for the keys too). A sequence without keys gives zeros; rows outside every sequence are
    not written. One compiled kernel per head count, head dim, mask, dtype and tile set serves
    every batch: a new batch costs host time only."""
    import torch

    from tirx.kernels._host import check_cuda

    dt = _check_qkv(q, k, v, "(tokens, H, D)", "(kv_tokens, HKV, D)", (2,))
    nq, H, D = q.shape
    check_cuda("cu_seqlens_q", cu_seqlens_q, ("int32",), 1)
    if cu_seqlens_k is None:
        cu_seqlens_k = cu_seqlens_q
    elif causal and cu_seqlens_k is not cu_seqlens_q:
        raise ValueError("cu_seqlens_k: causal masks need the queries' offsets for the keys (pass None)")
    check_cuda("cu_seqlens_k", cu_seqlens_k, ("int32",), 1)
    nb = cu_seqlens_q.shape[0] - 1
    if not 1 <= nb <= 65535 or cu_seqlens_k.shape != cu_seqlens_q.shape:
        raise ValueError(
            f"cu_seqlens_q: expected batch + 1 offsets, batch from 1 to 65535 (a grid dimension), and as "
            f"many in cu_seqlens_k, got {tuple(cu_seqlens_q.shape)} and {tuple(cu_seqlens_k.shape)}"
        )
    for name, t in (("k", k), ("v", v), ("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if t.device != q.device:
            raise ValueError(f"{name}: on {t.device}, but q is on {q.device}")
    if max_seqlen_q is None:
        max_seqlen_q = int((cu_seqlens_q[1:] - cu_seqlens_q[:-1]).max()) if nq else 0
    elif not isinstance(max_seqlen_q, int) or max_seqlen_q < 0:
        raise ValueError(f"max_seqlen_q: expected a non-negative int, got {max_seqlen_q!r}")
    o = torch.empty_like(q)
    if nq == 0 or max_seqlen_q == 0 or k.shape[0] == 0:
        return o.zero_()
    hkv = k.shape[1]
    cfg = dict(tiles) if tiles else config_varlen(D, causal)
    if hkv != H:
        cfg["HKV"] = hkv
    key = tuple(sorted(cfg.items()))
    ckey = (q.data_ptr(), k.data_ptr(), v.data_ptr(), nq, k.shape[0], H, hkv, D, causal, dt, key)
    plan = _VARLEN_CALLS.get(ckey)
    if plan is None:
        maps = varlen_maps(q, k, v, cfg.get("BM", 128), cfg.get("BN", 128))
        plan = _VARLEN_CALLS.put(ckey, (_compiled_varlen(H, D, causal, dt, key), maps))
    kern, maps = plan
    kern(o, *maps, cu_seqlens_q, cu_seqlens_k, nb, nq, max_seqlen_q)
    return o
