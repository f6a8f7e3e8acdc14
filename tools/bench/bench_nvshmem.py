"""All-gather and all-reduce written in tirx script with T.nvshmem, against NCCL
(``torch.distributed``) on the same GPUs (issue #17).

    torchrun --nproc-per-node 2 tools/bench/bench_nvshmem.py [--json out.json] [--quick]
    python tools/bench/bench_nvshmem.py            # one GPU: one PE, against NCCL with one rank
    python tools/bench/bench_nvshmem.py --check    # correctness only, small sizes

One process per GPU; NVSHMEM is bootstrapped with a unique id that rank 0 broadcasts through
torch.distributed (``tirx.runtime.nvshmem.init``). NVLink multicast stays off
(``NCCL_NVLS_ENABLE=0``, ``TORCH_SYMM_MEM_DISABLE_MULTICAST=1``, ``NVSHMEM_DISABLE_NVLS=1``).

The kernels (one launch per collective, ``G`` blocks, all resident):

- all-gather: every block puts its slice of the local chunk into every PE's output at this
  PE's offset (``putmem_signal_nbi_block``, +1 on the peer's signal word), then thread 0 of
  each block waits until all ``n_pes * G`` slices of this call have arrived.
- all-reduce (sum, float32): reduce-scatter by pushing slice ``p`` of the input to PE ``p``'s
  scratch row (signal), each PE sums its chunk over the rows, then pushes the sum to every
  other PE (signal) and waits for theirs.

Signal words count up across calls (call ``it`` waits for ``it * expected``), so nothing is
reset between launches. Times are CUDA-event medians; bus bandwidth as nccl-tests defines it
(all-gather: ``size * (n - 1) / n / t``, all-reduce: ``2 * size * (n - 1) / n / t``; with one
GPU, algorithm bandwidth ``size / t``). Ratios are tirx / NCCL.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

for _k, _v in (
    ("NCCL_NVLS_ENABLE", "0"),
    ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
    ("NVSHMEM_DISABLE_NVLS", "1"),
):
    os.environ.setdefault(_k, _v)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from tirx.script import tirx as T  # noqa: E402


def make_allgather(G: int, B: int):
    """``dst[pe * n : (pe + 1) * n] = src`` of every PE ``pe``, on every PE (``n % G == 0``)."""
    n, m = T.dynamic("n"), T.dynamic("m")

    @T.function
    def allgather(
        src: T.Tensor((n,), T.float32),
        dst: T.Tensor((m,), T.float32),
        sig: T.Tensor((1,), T.uint64),
        it: T.int32,
    ):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=G, block=B))
        bid = T.cuda.block_idx("x")
        tid = T.cuda.thread_idx("x")
        me = T.nvshmem.my_pe()
        npes = T.nvshmem.n_pes()
        per = n // G
        for p in range(npes):
            T.nvshmem.putmem_signal_nbi.block(
                dst.ptr_to([me * n + bid * per]), src.ptr_to([bid * per]), T.int64(per) * 4,
                sig.ptr_to([0]), 1, "add", p,
            )  # fmt: skip
        if tid == 0:
            T.nvshmem.wait_until(sig.ptr_to([0]), "ge", T.uint64(it) * T.uint64(npes * G))

    return allgather


def make_allreduce(G: int, B: int):
    """``dst = sum over PEs of src`` on every PE; ``m = n_pes * c``, ``c % G == 0``;
    ``scratch`` holds one row of ``c`` per PE."""
    m = T.dynamic("m")

    @T.function
    def allreduce(
        src: T.Tensor((m,), T.float32),
        scratch: T.Tensor((m,), T.float32),
        dst: T.Tensor((m,), T.float32),
        sig: T.Tensor((2,), T.uint64),
        c: T.int32,
        it: T.int32,
    ):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=G, block=B))
        bid = T.cuda.block_idx("x")
        tid = T.cuda.thread_idx("x")
        me = T.nvshmem.my_pe()
        npes = T.nvshmem.n_pes()
        per = c // G
        lo = bid * per
        # reduce-scatter: my slice of chunk p goes to row `me` of PE p's scratch
        for p in range(npes):
            T.nvshmem.putmem_signal_nbi.block(
                scratch.ptr_to([me * c + lo]), src.ptr_to([p * c + lo]), T.int64(per) * 4,
                sig.ptr_to([0]), 1, "add", p,
            )  # fmt: skip
        if tid == 0:
            T.nvshmem.wait_until(sig.ptr_to([0]), "ge", T.uint64(it) * T.uint64(npes * G))
        T.cuda.cta_sync()
        for jj in range((per + B - 1) // B):
            j = jj * B + tid
            if j < per:
                acc: T.float32 = 0.0
                for q in range(npes):
                    acc = acc + scratch[q * c + lo + j]
                dst[me * c + lo + j] = acc
        T.cuda.cta_sync()
        # all-gather of the sums
        for p in range(npes):
            if p != me:
                T.nvshmem.putmem_signal_nbi.block(
                    dst.ptr_to([me * c + lo]), dst.ptr_to([me * c + lo]), T.int64(per) * 4,
                    sig.ptr_to([1]), 1, "add", p,
                )  # fmt: skip
        if tid == 0:
            T.nvshmem.wait_until(sig.ptr_to([1]), "ge", T.uint64(it) * T.uint64((npes - 1) * G))

    return allreduce


# ----------------------------------------------------------------------------- GPU run
def _median_ms(torch, fn, warmup: int, reps: int) -> float:
    """Median ms of ``fn()``: CUDA events around each launch, one at a time, after warm-up
    (``tirx.testing.do_bench``; no L2 flush)."""
    from tirx.testing import do_bench

    return do_bench(fn, n_warmup=warmup, n_repeat=reps, flush_l2=False, sync_each=True, device="cuda")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the results here (rank 0)")
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repetitions")
    ap.add_argument("--check", action="store_true", help="correctness only, small sizes")
    ap.add_argument("--block", type=int, default=512)
    ap.add_argument("--grid", type=int, default=0, help="blocks per kernel (default: SM count)")
    args = ap.parse_args(argv)

    import torch
    import torch.distributed as dist

    import tirx
    from tirx.runtime import nvshmem

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    if "MASTER_ADDR" not in os.environ:  # a plain single-GPU run
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("MASTER_PORT", "29531"))
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", local))

    sizes_mb = [1, 4] if args.check else ([1, 64, 256] if args.quick else [1, 4, 16, 64, 256])
    reps, warm = (3, 1) if args.check else ((10, 3) if args.quick else (30, 5))
    G = args.grid or torch.cuda.get_device_properties(local).multi_processor_count
    B = args.block
    # symmetric heap: all-gather output (world * max) + all-reduce src/scratch/dst (3 * max)
    need = (world + 3) * max(sizes_mb) * 2**20 + 2**26
    os.environ.setdefault("NVSHMEM_SYMMETRIC_SIZE", str(need))
    pe = nvshmem.init(rank=rank, world_size=world, device=local)
    assert pe == rank and nvshmem.num_pes() == world, (pe, nvshmem.num_pes())

    ag = tirx.compile(make_allgather(G, B), target="cuda")
    ar = tirx.compile(make_allreduce(G, B), target="cuda")
    sig_ag, sig_ar = nvshmem.zeros(1, "uint64"), nvshmem.zeros(2, "uint64")
    counters = {"ag": 0, "ar": 0}
    rows = []
    for mb in sizes_mb:
        n_ag = max(G, (mb * 2**20 // 4) // G * G)  # per-rank elements of the all-gather
        c = max(G, (mb * 2**20 // 4) // (world * G) * G)  # all-reduce chunk per PE
        m_ar = c * world
        src = nvshmem.empty(n_ag, "float32")
        dst = nvshmem.empty(n_ag * world, "float32")
        a_src, a_scr, a_dst = (nvshmem.empty(m_ar, "float32") for _ in range(3))
        s_t = src.torch()
        s_t.copy_(torch.arange(n_ag, device="cuda", dtype=torch.float32) % 977 + 1000 * rank)
        x = a_src.torch()
        x.copy_((torch.arange(m_ar, device="cuda", dtype=torch.float32) % 131) * (rank + 1))
        nvshmem.barrier()
        torch.cuda.synchronize()

        def run_ag(src=src, dst=dst):
            counters["ag"] += 1
            ag(src, dst, sig_ag, counters["ag"])

        def run_ar(a_src=a_src, a_scr=a_scr, a_dst=a_dst, c=c):
            counters["ar"] += 1
            ar(a_src, a_scr, a_dst, sig_ar, c, counters["ar"])

        # correctness against NCCL
        run_ag()
        run_ar()
        torch.cuda.synchronize()
        ref_ag = torch.empty(n_ag * world, device="cuda")
        dist.all_gather_into_tensor(ref_ag, s_t)
        ref_ar = x.clone()
        dist.all_reduce(ref_ar)
        torch.cuda.synchronize()
        ok_ag = bool(torch.equal(dst.torch(), ref_ag))
        ok_ar = bool(torch.allclose(a_dst.torch(), ref_ar, rtol=1e-5, atol=1e-3))
        row = {"mb": mb, "world": world, "allgather_ok": ok_ag, "allreduce_ok": ok_ar}
        if not args.check:
            nccl_out = torch.empty_like(ref_ag)
            t = {
                "tirx_allgather": _median_ms(torch, run_ag, warm, reps),
                "nccl_allgather": _median_ms(
                    torch, lambda o=nccl_out, i=s_t: dist.all_gather_into_tensor(o, i), warm, reps
                ),
                "tirx_allreduce": _median_ms(torch, run_ar, warm, reps),
                "nccl_allreduce": _median_ms(torch, lambda r=ref_ar: dist.all_reduce(r), warm, reps),
            }
            nb_ag, nb_ar = n_ag * world * 4, m_ar * 4
            f_ag = (world - 1) / world if world > 1 else 1.0
            f_ar = 2 * (world - 1) / world if world > 1 else 1.0
            for key, ms in t.items():
                nb, f = (nb_ag, f_ag) if "allgather" in key else (nb_ar, f_ar)
                row[key + "_ms"] = round(ms, 4)
                row[key + "_busbw_GBs"] = round(nb * f / (ms * 1e-3) / 1e9, 1)
            row["allgather_ratio"] = round(t["nccl_allgather"] / t["tirx_allgather"], 3)
            row["allreduce_ratio"] = round(t["nccl_allreduce"] / t["tirx_allreduce"], 3)
        rows.append(row)
        nvshmem.barrier()
        torch.cuda.synchronize()
        for s in (src, dst, a_src, a_scr, a_dst):
            s.free()
    if rank == 0:
        for r in rows:
            print(json.dumps(r))
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"world": world, "grid": G, "block": B, "rows": rows}, f, indent=1)
    bad = [r for r in rows if not (r["allgather_ok"] and r["allreduce_ok"])]
    sig_ag.free()
    sig_ar.free()
    nvshmem.barrier()
    dist.destroy_process_group()
    nvshmem.finalize()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
