"""Distributed shared memory on a 2-CTA cluster.

Each CTA fills its shared buffer, the cluster synchronizes, and every thread reads the
*other* CTA's buffer through a pointer from ``T.ptx.mapa`` (PTX ``mapa``), typed like its
operand (``T.Ptr(T.uint64, "shared")``) and viewed with ``T.decl_buffer``: the generated CUDA
declares that remote pointer as ``uint64_t*``. A second cluster barrier
keeps each CTA's shared memory alive until its peer has read it.
"""

from __future__ import annotations

from tirx.script import tirx as T


def make_dsmem_exchange(clusters=4, block=128):
    @T.function
    def dsmem_exchange(Out: T.Tensor((2 * clusters * block,), "uint64")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=2 * clusters, block=block, cluster=2))
        tx = T.cuda.thread_idx("x")
        bx = T.cuda.block_idx("x")
        rank = T.cuda.cta_rank()
        buf = T.alloc_shared((block,), "uint64")
        buf[tx] = T.cast(bx * 1000 + tx, "uint64")
        T.cuda.cluster_sync()
        remote_ptr = T.ptx.mapa(buf.ptr_to([0]), 1 - rank)  # a T.Ptr(T.uint64, "shared")
        remote = T.decl_buffer([block], "uint64", data=remote_ptr, scope="shared")
        Out[bx * block + tx] = remote[tx]
        T.cuda.cluster_sync()

    return dsmem_exchange


KERNELS = {"dsmem_exchange": lambda: make_dsmem_exchange()}
