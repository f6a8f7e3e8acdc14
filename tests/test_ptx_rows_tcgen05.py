"""The PTX instruction table's tcgen05 rows (tirx/ops/ptx_rows_tcgen05.py: TMEM alloc, ld/st, cp, mma, commit, fences).

For each family: TIRx's printed text loads in tirx and round-trips (print -> load ->
equal), the chain written in a kernel builds the same IR, the CUDA tirx generates
compiles through NVRTC for sm_100a (no GPU) with the PTX instruction TIRx emits, bad
chains are located errors naming the allowed modifiers (helpers: tests/ptx_rows_util.py),
and every TIRx form of these families has a row or is listed below with the reason.
"""

from __future__ import annotations

from ptx_rows_util import check_compiles_all, check_emits, family_tests, form_coverage

#: (chain written in a kernel, TIRx's printed text of it, the PTX instruction TIRx's asm
#: emits for sm_100a), recorded from apache-tvm-tirx 0.1.0a4 running the chain in the same
#: kernel (tcgen05 shapes such as 32x32b are not Python names: TIRx's kernels use the
#: positional form, tirx's chains also take ``._32x32b``)
CASES: list[tuple[str, str, str]] = [
    ('T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(s.data, 32)',
     'T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(s.data), T.uint32(32), "alloc", "cta_group::1", "sync", "aligned", "shared::cta", "b32", "")',
     'tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32'),
    ('T.ptx.tcgen05.alloc.cta_group__2.sync.aligned.b32(B.data, y[0])',
     'T.ptx.tcgen05(B.data, y[0], "alloc", "cta_group::2", "sync", "aligned", "", "b32", "")',
     'tcgen05.alloc.cta_group::2.sync.aligned.b32'),
    ('T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(y[0], 32)',
     'T.ptx.tcgen05(y[0], T.uint32(32), "dealloc", "cta_group::1", "sync", "aligned", "b32", "")',
     'tcgen05.dealloc.cta_group::1.sync.aligned.b32'),
    ('T.ptx.tcgen05.relinquish_alloc_permit.cta_group__2.sync.aligned()',
     'T.ptx.tcgen05("relinquish_alloc_permit", "cta_group::2", "sync", "aligned", "")',
     'tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned'),
    ('T.ptx.tcgen05.ld.sync.aligned._32x32b.x2.b32(y[0], y[1], y[2])',
     'T.ptx.tcgen05(y[0], y[1], y[2], "ld", "sync", "aligned", "32x32b", "x2", "", "b32", "")',
     'tcgen05.ld.sync.aligned.32x32b.x2.b32'),
    ('T.ptx.tcgen05.ld.sync.aligned._16x64b.x4.b32(y[0], y[1], y[2], y[3], y[4])',
     'T.ptx.tcgen05(y[0], y[1], y[2], y[3], y[4], "ld", "sync", "aligned", "16x64b", "x4", "", "b32", "")',
     'tcgen05.ld.sync.aligned.16x64b.x4.b32'),
    ('T.ptx.tcgen05.ld.sync.aligned._16x128b.x1.b32(y[0], y[1], y[2])',
     'T.ptx.tcgen05(y[0], y[1], y[2], "ld", "sync", "aligned", "16x128b", "x1", "", "b32", "")',
     'tcgen05.ld.sync.aligned.16x128b.x1.b32'),
    ('T.ptx.tcgen05.ld.sync.aligned._16x256b.x1.pack__16b.b32(y[0], y[1], y[2], y[3], y[4])',
     'T.ptx.tcgen05(y[0], y[1], y[2], y[3], y[4], "ld", "sync", "aligned", "16x256b", "x1", "pack::16b", "b32", "")',
     'tcgen05.ld.sync.aligned.16x256b.x1.pack::16b.b32'),
    ('T.ptx.tcgen05.ld.sync.aligned._16x32bx2.x2.b32(y[0], y[1], y[2], 16)',
     'T.ptx.tcgen05(y[0], y[1], y[2], T.int32(16), "ld", "sync", "aligned", "16x32bx2", "x2", "", "b32", "")',
     'tcgen05.ld.sync.aligned.16x32bx2.x2.b32'),
    ('T.ptx.tcgen05.st.sync.aligned._32x32b.x2.b32(y[2], y[0], y[1])',
     'T.ptx.tcgen05(y[2], y[0], y[1], "st", "sync", "aligned", "32x32b", "x2", "", "b32", "")',
     'tcgen05.st.sync.aligned.32x32b.x2.b32'),
    ('T.ptx.tcgen05.st.sync.aligned._16x128b.x1.unpack__16b.b32(y[2], y[0], y[1])',
     'T.ptx.tcgen05(y[2], y[0], y[1], "st", "sync", "aligned", "16x128b", "x1", "unpack::16b", "b32", "")',
     'tcgen05.st.sync.aligned.16x128b.x1.unpack::16b.b32'),
    ('T.ptx.tcgen05.st.sync.aligned._16x32bx2.x1.b32(y[2], 8, y[0])',
     'T.ptx.tcgen05(y[2], T.int32(8), y[0], "st", "sync", "aligned", "16x32bx2", "x1", "", "b32", "")',
     'tcgen05.st.sync.aligned.16x32bx2.x1.b32'),
    ('T.ptx.tcgen05.wait__ld.sync.aligned()',
     'T.ptx.tcgen05("wait::ld", "sync", "aligned", "")',
     'tcgen05.wait::ld.sync.aligned'),
    ('T.ptx.tcgen05.wait__st.sync.aligned()',
     'T.ptx.tcgen05("wait::st", "sync", "aligned", "")',
     'tcgen05.wait::st.sync.aligned'),
    ('T.ptx.tcgen05.fence__before_thread_sync()',
     'T.ptx.tcgen05("fence::before_thread_sync", "")',
     'tcgen05.fence::before_thread_sync'),
    ('T.ptx.tcgen05.fence__after_thread_sync()',
     'T.ptx.tcgen05("fence::after_thread_sync", "")',
     'tcgen05.fence::after_thread_sync'),
    ('T.ptx.tcgen05.cp.cta_group__1._128x256b(y[0], x[0])',
     'T.ptx.tcgen05(y[0], x[0], "cp", "cta_group::1", "128x256b", "", "", "", "")',
     'tcgen05.cp.cta_group::1.128x256b'),
    ('T.ptx.tcgen05.cp.cta_group__2._64x128b.warpx2__02_13(y[0], x[0])',
     'T.ptx.tcgen05(y[0], x[0], "cp", "cta_group::2", "64x128b", "warpx2::02_13", "", "", "")',
     'tcgen05.cp.cta_group::2.64x128b.warpx2::02_13'),
    ('T.ptx.tcgen05.cp.cta_group__1._128x128b.b8x16.b6x16_p32(y[0], x[0])',
     'T.ptx.tcgen05(y[0], x[0], "cp", "cta_group::1", "128x128b", "", "b8x16", "b6x16_p32", "")',
     'tcgen05.cp.cta_group::1.128x128b.b8x16.b6x16_p32'),
    ('T.ptx.tcgen05.cp.cta_group__1._32x128b.warpx4(y[0], x[0])',
     'T.ptx.tcgen05(y[0], x[0], "cp", "cta_group::1", "32x128b", "warpx4", "", "", "")',
     'tcgen05.cp.cta_group::1.32x128b.warpx4'),
    ('T.ptx.tcgen05.mma.cta_group__1.kind__f16(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], w[0] > 0)',
     'T.ptx.tcgen05(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], w[0] > 0, "mma", "cta_group::1", "kind::f16", "", "p8")',
     'tcgen05.mma.cta_group::1.kind::f16'),
    ('T.ptx.tcgen05.mma.cta_group__2.kind__tf32(y[0], y[7], x[1], y[1], y[2], y[3], y[4], y[5], y[2], y[3], y[4], y[5], True)',
     'T.ptx.tcgen05(y[0], y[7], x[1], y[1], y[2], y[3], y[4], y[5], y[2], y[3], y[4], y[5], T.uint32(1), "mma", "cta_group::2", "kind::tf32", "p12")',
     'tcgen05.mma.cta_group::2.kind::tf32'),
    ('T.ptx.tcgen05.mma.cta_group__1.kind__f8f6f4.collector__a__fill(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], True)',
     'T.ptx.tcgen05(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], T.uint32(1), "mma", "cta_group::1", "kind::f8f6f4", "collector::a::fill", "p8")',
     'tcgen05.mma.cta_group::1.kind::f8f6f4.collector::a::fill'),
    ('T.ptx.tcgen05.mma.cta_group__2.kind__i8(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], y[2], y[3], y[4], y[5], T.ptx.pred(y[6]))',
     'T.ptx.tcgen05(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], y[2], y[3], y[4], y[5], y[6], "mma", "cta_group::2", "kind::i8", "", "p12")',
     'tcgen05.mma.cta_group::2.kind::i8'),
    ('T.ptx.tcgen05.mma.cta_group__1.kind__mxf8f6f4.block_scale.scale_vec__1X(y[0], x[0], x[1], y[1], y[2], y[3], True)',
     'T.ptx.tcgen05(y[0], x[0], x[1], y[1], y[2], y[3], T.uint32(1), "mma", "cta_group::1", "kind::mxf8f6f4", "block_scale", "scale_vec::1X", "p6")',
     'tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X'),
    ('T.ptx.tcgen05.mma.cta_group__1.kind__mxf4nvf4.block_scale.scale_vec__4X(y[0], y[7], x[1], y[1], y[2], y[3], False)',
     'T.ptx.tcgen05(y[0], y[7], x[1], y[1], y[2], y[3], T.uint32(0), "mma", "cta_group::1", "kind::mxf4nvf4", "block_scale", "scale_vec::4X", "p6")',
     'tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X'),
    ('T.ptx.tcgen05.mma.ws.cta_group__1.kind__i8(y[0], x[0], x[1], y[1], True, x[2])',
     'T.ptx.tcgen05(y[0], x[0], x[1], y[1], T.uint32(1), x[2], "mma", "ws", "cta_group::1", "kind::i8", "", "p4")',
     'tcgen05.mma.ws.cta_group::1.kind::i8'),
    ('T.ptx.tcgen05.mma.ws.cta_group__1.kind__f16.collector__b0__fill(y[0], y[7], x[1], y[1], True, x[2])',
     'T.ptx.tcgen05(y[0], y[7], x[1], y[1], T.uint32(1), x[2], "mma", "ws", "cta_group::1", "kind::f16", "collector::b0::fill", "p4")',
     'tcgen05.mma.ws.cta_group::1.kind::f16.collector::b0::fill'),
    ('T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(s.data)',
     'T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(s.data), "commit", "cta_group::1", "mbarrier::arrive::one", "shared::cluster", "b64", "")',
     'tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64'),
    ('T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.b64(B.data)',
     'T.ptx.tcgen05(B.data, "commit", "cta_group::1", "mbarrier::arrive::one", "", "b64", "")',
     'tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64'),
    ('T.ptx.tcgen05.commit.cta_group__2.mbarrier__arrive__one.shared__cluster.multicast__cluster.b64(s.data, 3)',
     'T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(s.data), T.uint16(3), "commit", "cta_group::2", "mbarrier::arrive::one", "shared::cluster", "multicast::cluster", "b64", "")',
     'tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64'),
    # tcgen05.ld.red (sm_103a)
    ('T.ptx.tcgen05.ld.red.sync.aligned._32x32b.x2.min.f32(z[0], z[1], z[2], y[3])',
     'T.ptx.tcgen05(z[0], z[1], z[2], y[3], "ld", "red", "sync", "aligned", "32x32b", "x2", "min", "", "", "f32", "")',
     'tcgen05.ld.red.sync.aligned.32x32b.x2.min.f32'),
    ('T.ptx.tcgen05.ld.red.sync.aligned._32x32b.x2.max.abs.NaN.f32(z[0], z[1], z[2], y[3])',
     'T.ptx.tcgen05(z[0], z[1], z[2], y[3], "ld", "red", "sync", "aligned", "32x32b", "x2", "max", "abs", "NaN", "f32", "")',
     'tcgen05.ld.red.sync.aligned.32x32b.x2.max.abs.NaN.f32'),
    ('T.ptx.tcgen05.ld.red.sync.aligned._16x32bx2.x2.max.u32(y[0], y[1], y[2], y[3], 16)',
     'T.ptx.tcgen05(y[0], y[1], y[2], y[3], T.int32(16), "ld", "red", "sync", "aligned", "16x32bx2", "x2", "max", "", "", "u32", "")',
     'tcgen05.ld.red.sync.aligned.16x32bx2.x2.max.u32'),
]  # fmt: skip

#: forms TIRx marks sm_107 (NVRTC 13.0 cannot target sm_107: their emitted text is checked
#: against TIRx's instead), recorded the same way
CASES_SM107: list[tuple[str, str, str]] = [
    ('T.ptx.tcgen05.alloc.exclusive.cta_group__1.sync.aligned.shared__cta.b32(s.data, 32)',
     'T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(s.data), T.uint32(32), "alloc", "exclusive", "cta_group::1", "sync", "aligned", "shared::cta", "b32", "")',
     'tcgen05.alloc.exclusive.cta_group::1.sync.aligned.shared::cta.b32'),
    ('T.ptx.tcgen05.dealloc.exclusive.cta_group__1.sync.aligned.b32(y[0], 32)',
     'T.ptx.tcgen05(y[0], T.uint32(32), "dealloc", "exclusive", "cta_group::1", "sync", "aligned", "b32", "")',
     'tcgen05.dealloc.exclusive.cta_group::1.sync.aligned.b32'),
    ('T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.multicast__cluster__16b.b64(s.data, 3)',
     'T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(s.data), T.uint16(3), "commit", "cta_group::1", "mbarrier::arrive::one", "shared::cluster", "multicast::cluster::16b", "b64", "")',
     'tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster::16b.b64'),
    ('T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.multicast__cluster__32b.b64(s.data, 3)',
     'T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(s.data), T.uint32(3), "commit", "cta_group::1", "mbarrier::arrive::one", "shared::cluster", "multicast::cluster::32b", "b64", "")',
     'tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster::32b.b64'),
    ('T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.sync_restrict__shared__read__mma__a.shared__cluster.b64(s.data)',
     'T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(s.data), "commit", "cta_group::1", "mbarrier::arrive::one", "sync_restrict::shared::read::mma::a", "shared::cluster", "b64", "")',
     'tcgen05.commit.cta_group::1.mbarrier::arrive::one.sync_restrict::shared::read::mma::a.shared::cluster.b64'),
    ('T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.sync_restrict__shared__read__mma__a.shared__cluster.multicast__cluster.b64(s.data, 5)',
     'T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(s.data), T.uint16(5), "commit", "cta_group::1", "mbarrier::arrive::one", "sync_restrict::shared::read::mma::a", "shared::cluster", "multicast::cluster", "b64", "")',
     'tcgen05.commit.cta_group::1.mbarrier::arrive::one.sync_restrict::shared::read::mma::a.shared::cluster.multicast::cluster.b64'),
    ('T.ptx.tcgen05.ld.spcompress.sync.aligned._32x32b.x4.min.sp__2_col_4.f32.b2(y[0], y[1], y[2], y[3])',
     'T.ptx.tcgen05(y[0], y[1], y[2], y[3], "ld", "spcompress", "sync", "aligned", "32x32b", "x4", "min", "sp::2:4", "", "f32", "b2", "")',
     'tcgen05.ld.spcompress.sync.aligned.32x32b.x4.min.sp::2:4.f32.b2'),
    ('T.ptx.tcgen05.ld.red.spcompress.sync.aligned._32x32b.x4.max.sp__2_col_4.abs.NaN.f32.b2(y[0], y[1], y[2], z[0], y[3])',
     'T.ptx.tcgen05(y[0], y[1], y[2], z[0], y[3], "ld", "red", "spcompress", "sync", "aligned", "32x32b", "x4", "max", "sp::2:4", "abs", "NaN", "f32", "b2", "")',
     'tcgen05.ld.red.spcompress.sync.aligned.32x32b.x4.max.sp::2:4.abs.NaN.f32.b2'),
    ('T.ptx.tcgen05.mma.cta_group__1.kind__ti16(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], True)',
     'T.ptx.tcgen05(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], T.uint32(1), "mma", "cta_group::1", "kind::ti16", "p8")',
     'tcgen05.mma.cta_group::1.kind::ti16'),
    ('T.ptx.tcgen05.mma.cta_group__1.kind__ti16.collector__b__use(y[0], y[7], x[1], y[1], y[2], y[3], y[4], y[5], True)',
     'T.ptx.tcgen05(y[0], y[7], x[1], y[1], y[2], y[3], y[4], y[5], T.uint32(1), "mma", "cta_group::1", "kind::ti16", "collector::b::use", "p8")',
     'tcgen05.mma.cta_group::1.kind::ti16.collector::b::use'),
    ('T.ptx.tcgen05.mma.sp.cta_group__1.kind__ti16(y[0], x[0], x[1], y[6], y[1], y[2], y[3], y[4], y[5], True)',
     'T.ptx.tcgen05(y[0], x[0], x[1], y[6], y[1], y[2], y[3], y[4], y[5], T.uint32(1), "mma", "sp", "cta_group::1", "kind::ti16", "p9")',
     'tcgen05.mma.sp.cta_group::1.kind::ti16'),
    ('T.ptx.tcgen05.mma.ws.cta_group__1.kind__ti16(y[0], x[0], x[1], y[1], True)',
     'T.ptx.tcgen05(y[0], x[0], x[1], y[1], T.uint32(1), "mma", "ws", "cta_group::1", "kind::ti16", "", "p4")',
     'tcgen05.mma.ws.cta_group::1.kind::ti16'),
    ('T.ptx.tcgen05.mma.ws.sp.cta_group__1.kind__ti16.collector__b1__fill(y[0], y[7], x[1], y[6], y[1], True, x[2])',
     'T.ptx.tcgen05(y[0], y[7], x[1], y[6], y[1], T.uint32(1), x[2], "mma", "ws", "sp", "cta_group::1", "kind::ti16", "collector::b1::fill", "p5")',
     'tcgen05.mma.ws.sp.cta_group::1.kind::ti16.collector::b1::fill'),
    ('T.ptx.tcgen05.mma.cta_group__1.kind__f8f6f4.decompress__lut__b(y[0], x[0], x[1], y[6], y[1], y[2], y[3], y[4], y[5], True)',
     'T.ptx.tcgen05(y[0], x[0], x[1], y[6], y[1], y[2], y[3], y[4], y[5], T.uint32(1), "mma", "cta_group::1", "kind::f8f6f4", "decompress::lut::b", "", "", "p9")',
     'tcgen05.mma.cta_group::1.kind::f8f6f4.decompress::lut::b'),
    ('T.ptx.tcgen05.mma.cta_group__1.kind__mxf8f6f4.block_scale.decompress__lut__b.block32(y[0], y[7], x[1], y[6], y[1], y[2], y[3], True)',
     'T.ptx.tcgen05(y[0], y[7], x[1], y[6], y[1], y[2], y[3], T.uint32(1), "mma", "cta_group::1", "kind::mxf8f6f4", "block_scale", "decompress::lut::b", "block32", "", "", "p7")',
     'tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.decompress::lut::b.block32'),
    ('T.ptx.tcgen05.mma.cta_group__1.kind__f16.collector__a__fill.collector__b__use(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], True)',
     'T.ptx.tcgen05(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], T.uint32(1), "mma", "cta_group::1", "kind::f16", "collector::a::fill", "collector::b::use", "p8")',
     'tcgen05.mma.cta_group::1.kind::f16.collector::a::fill.collector::b::use'),
    ('T.ptx.tcgen05.mma.cta_group__1.kind__tf32.ashift.collector__b__lastuse(y[0], y[7], x[1], y[1], y[2], y[3], y[4], y[5], True)',
     'T.ptx.tcgen05(y[0], y[7], x[1], y[1], y[2], y[3], y[4], y[5], T.uint32(1), "mma", "cta_group::1", "kind::tf32", "ashift", "collector::b::lastuse", "p8")',
     'tcgen05.mma.cta_group::1.kind::tf32.ashift.collector::b::lastuse'),
    ('T.ptx.tcgen05.mma.sp.cta_group__1.kind__f16.collector__a__use.collector__b__discard(y[0], y[7], x[1], y[6], y[1], y[2], y[3], y[4], y[5], True)',
     'T.ptx.tcgen05(y[0], y[7], x[1], y[6], y[1], y[2], y[3], y[4], y[5], T.uint32(1), "mma", "sp", "cta_group::1", "kind::f16", "", "collector::a::use", "collector::b::discard", "p9")',
     'tcgen05.mma.sp.cta_group::1.kind::f16.collector::a::use.collector::b::discard'),
    ('T.ptx.tcgen05.mma.cta_group__1.kind__mxf4.block_scale.collector__a__fill(y[0], x[0], x[1], y[1], y[2], y[3], True)',
     'T.ptx.tcgen05(y[0], x[0], x[1], y[1], y[2], y[3], T.uint32(1), "mma", "cta_group::1", "kind::mxf4", "block_scale", "collector::a::fill", "", "p6")',
     'tcgen05.mma.cta_group::1.kind::mxf4.block_scale.collector::a::fill'),
    ('T.ptx.tcgen05.mma.sp.cta_group__1.kind__mxf8f6f4.block_scale.collector__a__fill.collector__b__fill(y[0], y[7], x[1], y[6], y[1], y[2], y[3], True)',
     'T.ptx.tcgen05(y[0], y[7], x[1], y[6], y[1], y[2], y[3], T.uint32(1), "mma", "sp", "cta_group::1", "kind::mxf8f6f4", "block_scale", "collector::a::fill", "collector::b::fill", "p7")',
     'tcgen05.mma.sp.cta_group::1.kind::mxf8f6f4.block_scale.collector::a::fill.collector::b::fill'),
    ('T.ptx.tcgen05.mma.cta_group__1.kind__mxf4nvf4.block_scale.block16(y[0], x[0], x[1], y[1], y[2], y[3], True)',
     'T.ptx.tcgen05(y[0], x[0], x[1], y[1], y[2], y[3], T.uint32(1), "mma", "cta_group::1", "kind::mxf4nvf4", "block_scale", "block16", "", "", "p6")',
     'tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16'),
]  # fmt: skip
CASES += CASES_SM107

#: ptxas refuses a kernel using both .cta_group::1 and .cta_group::2: the cta_group::2 forms
#: compile in a kernel of their own; tcgen05.ld.red needs sm_103a (tests below)
CG2 = {c[0] for c in CASES if "cta_group__2" in c[0]}
SM103 = {c[0] for c in CASES if c[2].startswith("tcgen05.ld.red")}
SM107 = {c[0] for c in CASES_SM107}
SM103 -= SM107
NO_COMPILE = CG2 | SM103 | SM107

BAD_CHAINS = [
    ("T.ptx.tcgen05.ld.sync.aligned._32x32b.x2.b32(y[0], y[2])", ["takes 3 operand(s)", "r0, r1, taddr"]),
    ("T.ptx.tcgen05.mma.cta_group__2.kind__f16(y[0], x[0], x[1], y[1], y[2], y[3], y[4], y[5], True)",
     ["takes 13 operand(s)"]),
    ("T.ptx.tcgen05.mma.ws.cta_group__2", ["'cta_group__2'", "allowed:"]),
    ("T.ptx.tcgen05.cp.cta_group__1._256x256b", ["'_256x256b'", "allowed:", "_128x256b"]),
]  # fmt: skip

BAD_TEXT = [
    ('T.ptx.tcgen05(y[0], y[1], y[2], "ld", "sync", "aligned", "32x32b", "x4", "", "b32", "")', ["takes 5 operand(s)"]),
]  # fmt: skip

#: TIRx forms of tcgen05 tirx leaves out, with the reason: none (every form has a row)
UNSUPPORTED: dict[tuple[str, str], str] = {}
FAMILIES = ("tcgen05",)

globals().update(family_tests(CASES, BAD_CHAINS, BAD_TEXT, NO_COMPILE, arch="sm_100a"))


def test_cta_group_2_forms_compile_for_sm100a(monkeypatch, tmp_path):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    check_compiles_all([c for c in CASES if c[0] in CG2], "sm_100a")


def test_ld_red_compiles_for_sm103a(monkeypatch, tmp_path):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))
    check_compiles_all([c for c in CASES if c[0] in SM103], "sm_103a")


def test_sm107_forms_emit_tirx_instruction():
    check_emits(CASES_SM107)


def test_every_tirx_form_has_a_row_or_a_reason():
    missing, stale = form_coverage(FAMILIES, UNSUPPORTED)
    assert not missing, missing
    assert not stale, stale


def test_register_vectors_follow_shape_and_cta_group():
    from tirx.ops.ptx_rows_tcgen05 import TCGEN05

    rows = {r.name: r for r in TCGEN05.rows}
    ld = rows["tcgen05_ld"]
    for shape, per in (("32x32b", 1), ("16x64b", 1), ("16x128b", 2), ("16x256b", 4)):
        for num in (1, 2, 8, 128):
            mods = ("ld", "sync", "aligned", shape, f"x{num}", "", "b32")
            assert len(ld.layout(mods)) == num * per + 1  # the registers and taddr
    mma = rows["tcgen05_mma_ss"]
    for cg, n in (("cta_group::1", 4), ("cta_group::2", 8)):
        lay = mma.layout(("mma", cg, "kind::f16", ""))
        assert sum(o.name.startswith("disable_output_lane") for o in lay) == n
