"""The PTX instruction table (tirx/ops/ptx_table.py, rows in tirx/ops/ptx_rows.py and hopper.py).

- Every covered form written as a chain (``T.ptx.mbarrier.init.shared__cta.b64(addr, 1)``)
  builds the IR that TIRx's printed text of it loads to (the texts below were written by
  hand from what apache-tvm-tirx 0.1.0a4 prints for those chains), and the printed text
  read by the Python frontend builds it too.
- Print/load round trip over table rows and modifier choices (hypothesis).
- Every form's inline asm compiles through NVRTC for sm_90a (no GPU) and shows in the PTX.
- Bad modifiers, combinations and operands are located errors naming what is allowed.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_frontend_util import load_module

import tirx
import tirx.codegen
from tirx.errors import DiagnosticError, OpError
from tirx.ir import BufferLoad, Call, IntImm, StringImm
from tirx.ir.op import call, find, lookup
from tirx.ir.types import PointerType, TensorType, as_type, int32, uint32, uint64
from tirx.ops.ptx_table import (
    TOKEN_DTYPE,
    Chain,
    Row,
    _kind,
    _marker,
    _token,
    escape,
    match,
    opcodes,
    render,
    unescape,
)
from tirx.script import tirx as T
from tirx.surface.builder import IRBuilder, launch_args

ADDR = "T.address_of(bar[0])"
SADDR = f"T.cuda.cvta_generic_to_shared({ADDR})"

#: (chain written in a kernel, TIRx's printed form of it, a PTX line the NVRTC output shows)
CASES: list[tuple[str, str, str]] = [
    ("T.ptx.fence.proxy.async_.shared__cta()", 'T.ptx.fence("proxy", "async", "shared::cta", "")',
     "fence.proxy.async.shared::cta;"),
    ("T.ptx.fence.proxy.async_()", 'T.ptx.fence("proxy", "async", "", "")', "fence.proxy.async;"),
    ("T.ptx.fence.mbarrier_init.release.cluster()", 'T.ptx.fence("mbarrier_init", "release", "cluster", "")',
     "fence.mbarrier_init.release.cluster;"),
    ("T.ptx.fence.acq_rel.cta()", 'T.ptx.fence("acq_rel", "cta", "")', "fence.acq_rel.cta;"),
    (f"T.ptx.mbarrier.init.shared__cta.b64({ADDR}, 1)",
     f'T.ptx.mbarrier({SADDR}, T.uint32(1), "init", "", "shared::cta", "b64", "")',
     "mbarrier.init.shared::cta.b64 [%r"),
    (f"T.ptx.mbarrier.arrive.shared__cta.b64({ADDR})",
     f'T.ptx.mbarrier({SADDR}, "arrive", "", "", "shared::cta", "b64", "")',
     "mbarrier.arrive.shared::cta.b64 _, [%r"),
    (f"T.ptx.mbarrier.arrive.shared__cta.b64(x[0], {ADDR})",
     f'T.ptx.mbarrier(x[0], {SADDR}, "arrive", "", "", "shared::cta", "b64", "")',
     "mbarrier.arrive.shared::cta.b64 %rd"),
    (f"T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64({ADDR}, 128)",
     f'T.ptx.mbarrier({SADDR}, T.uint32(128), "arrive", "expect_tx", "", "", "shared::cta", "b64", "")',
     "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r"),
    (f"T.ptx.mbarrier.arrive.expect_tx.release.cta.shared__cta.b64(x[0], {ADDR}, 128)",
     f'T.ptx.mbarrier(x[0], {SADDR}, T.uint32(128), "arrive", "expect_tx", "release", "cta", "shared::cta", '
     '"b64", "")', "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %rd"),
    (f"T.ptx.mbarrier.expect_tx.relaxed.cta.shared__cta.b64({ADDR}, 128)",
     f'T.ptx.mbarrier({SADDR}, T.uint32(128), "expect_tx", "relaxed", "cta", "shared::cta", "b64", "")',
     "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r"),
    (f"T.ptx.mbarrier.try_wait.parity.shared__cta.b64(y[0], {ADDR}, 0)",
     f'T.ptx.mbarrier(y[0], {SADDR}, T.uint32(0), "try_wait", "parity", "", "", "", "shared::cta", "b64", "")',
     "mbarrier.try_wait.parity.shared::cta.b64 P0, [%r"),
    (f"T.ptx.mbarrier.try_wait.parity.acquire.cluster.shared__cta.b64(y[0], {ADDR}, 0)",
     f'T.ptx.mbarrier(y[0], {SADDR}, T.uint32(0), "try_wait", "parity", "", "acquire", "cluster", '
     '"shared::cta", "b64", "")', "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P0"),
    ("T.ptx.mbarrier.arrive.release.cluster.shared__cluster.b64(y[0], 1)",
     'T.ptx.mbarrier(y[0], T.uint32(1), "arrive", "release", "cluster", "shared::cluster", "b64", "")',
     "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r"),
    (f"T.ptx.mbarrier.arrive.noComplete.release.cta.shared__cta.b64(x[0], {ADDR}, 1)",
     f'T.ptx.mbarrier(x[0], {SADDR}, T.uint32(1), "arrive", "noComplete", "release", "cta", "shared::cta", '
     '"b64", "")', "mbarrier.arrive.noComplete.release.cta.shared::cta.b64 %rd"),
    ("T.ptx.wgmma.fence.sync.aligned()", 'T.ptx.wgmma("fence", "sync", "aligned", "")', "wgmma.fence.sync.aligned;"),
    ("T.ptx.wgmma.commit_group.sync.aligned()", 'T.ptx.wgmma("commit_group", "sync", "aligned", "")',
     "wgmma.commit_group.sync.aligned;"),
    ("T.ptx.wgmma.wait_group.sync.aligned(0)", 'T.ptx.wgmma(T.int32(0), "wait_group", "sync", "aligned", "")',
     "wgmma.wait_group.sync.aligned 0;"),
    ("T.ptx.setmaxnreg.inc.sync.aligned.u32(240)",
     'T.ptx.setmaxnreg(T.int32(240), "inc", "sync", "aligned", "u32", "")', "setmaxnreg.inc.sync.aligned.u32 240;"),
    ("T.ptx.setmaxnreg.dec.sync.aligned.u32(40)",
     'T.ptx.setmaxnreg(T.int32(40), "dec", "sync", "aligned", "u32", "")', "setmaxnreg.dec.sync.aligned.u32 40;"),
    ("T.ptx.cp.async_.bulk.commit_group()", 'T.ptx.cp("async", "bulk", "commit_group", "")',
     "cp.async.bulk.commit_group;"),
    ("T.ptx.cp.async_.bulk.wait_group(0)", 'T.ptx.cp(T.int32(0), "async", "bulk", "wait_group", "", "")',
     "cp.async.bulk.wait_group 0;"),
    ("T.ptx.cp.async_.bulk.wait_group.read(0)", 'T.ptx.cp(T.int32(0), "async", "bulk", "wait_group", "read", "")',
     "cp.async.bulk.wait_group.read 0;"),
    ("T.ptx.elect_sync(y[0], y[1], 0xffffffff)", 'T.ptx.elect_sync(y[0], y[1], T.uint32(4294967295), "")',
     "elect.sync %r"),
    ("T.ptx.prefetch.tensormap(A.data)", 'T.ptx.prefetch(A.data, "", "", "", "tensormap", "")',
     "prefetch.tensormap [%rd"),
    ("T.ptx.mapa.shared__cluster.u64(x[0], x[1], 1)",
     'T.ptx.mapa(x[0], x[1], T.uint32(1), "shared::cluster", "u64", "")', "mapa.shared::cluster.u64 %rd"),
    ("T.ptx.mapa.u64(x[0], A.data, 1)", 'T.ptx.mapa(x[0], A.data, T.uint32(1), "", "u64", "")', "mapa.u64 %rd"),
    ("T.ptx.shfl_sync.idx.b32(y[0], y[1], 0, 31, 0xffffffff)",
     'T.ptx.shfl_sync(y[0], y[1], T.uint32(0), T.uint32(31), T.uint32(4294967295), "idx", "b32", "")',
     "shfl.sync.idx.b32 %r"),
    ("T.ptx.cvta.to.shared.u64(x[0], A.data)", 'T.ptx.cvta(x[0], A.data, "to", "shared", "u64", "")',
     "cvta.to.shared.u64 %rd"),
    ("T.ptx.cvta.shared.u64(x[0], x[1])", 'T.ptx.cvta(x[0], x[1], "shared", "u64", "")', "cvta.shared.u64 %rd"),
    (f"T.ptx.cp.async_.mbarrier.arrive.noinc.shared__cta.b64({ADDR})",
     f'T.ptx.cp({SADDR}, "async", "mbarrier", "arrive", "noinc", "shared::cta", "b64", "")',
     "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%r"),
    # no state space: the address is generic (a pointer, not a shared-window address)
    ("T.ptx.mbarrier.arrive.b64(x[0], A.data)", 'T.ptx.mbarrier(x[0], A.data, "arrive", "", "", "", "b64", "")',
     "mbarrier.arrive.b64 %rd"),
    ("T.ptx.mbarrier.init.b64(A.data, 1)", 'T.ptx.mbarrier(A.data, T.uint32(1), "init", "", "", "b64", "")',
     "mbarrier.init.b64 [%rd"),
    # TMA: TIRx's printed form of a 2-d tile load (coordinates are one operand per dimension)
    (f"T.ptx.cp.async_.bulk.tensor._2d.shared__cta.global_.tile.mbarrier__complete_tx__bytes({ADDR}, A.data, 1, 2, "
     "T.address_of(bar[1]))",
     f'T.ptx.cp({SADDR}, A.data, T.int32(1), T.int32(2), T.cuda.cvta_generic_to_shared(T.address_of(bar[1])), '
     '"async", "bulk", "tensor", "2d", "shared::cta", "global", "tile", "mbarrier::complete_tx::bytes", "", "", "")',
     "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%r"),
    ("T.ptx.cp.async_.bulk.tensor._3d.global_.shared__cta.tile.bulk_group(A.data, 1, 2, 3, T.address_of(bar[0]))",
     f'T.ptx.cp(A.data, T.int32(1), T.int32(2), T.int32(3), {SADDR}, "async", "bulk", "tensor", "3d", "global", '
     '"shared::cta", "tile", "bulk_group", "", "")',
     "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%rd"),
    # cp.async: cp-size an immediate, then src-size (zero fill) and the cache policy when written
    (f"T.ptx.cp.async_.ca.shared.global_({ADDR}, A.data, 8)",
     f'T.ptx.cp({SADDR}, A.data, T.int32(8), "async", "ca", "shared", "global", "", "", "")',
     "cp.async.ca.shared.global [%r"),
    (f"T.ptx.cp.async_.cg.shared__cta.global_.L2__cache_hint.L2__128B({ADDR}, A.data, 16, y[0], x[0])",
     f'T.ptx.cp({SADDR}, A.data, T.int32(16), y[0], x[0], "async", "cg", "shared::cta", "global", '
     '"L2::cache_hint", "L2::128B", "")', "cp.async.cg.shared::cta.global.L2::cache_hint.L2::128B [%r"),
    (f"T.ptx.cp.async_.ca.shared.global_.L2__64B({ADDR}, A.data, 4, y[0] == 0)",
     f'T.ptx.cp({SADDR}, A.data, T.int32(4), y[0] == T.uint32(0), "async", "ca", "shared", "global", "", '
     '"L2::64B", "p3")', "cp.async.ca.shared.global.L2::64B [%r"),
    # non-tensor bulk copies
    (f"T.ptx.cp.async_.bulk.shared__cta.global_.mbarrier__complete_tx__bytes.L2__cache_hint({ADDR}, A.data, 16, "
     "T.address_of(bar[1]), x[0])",
     f'T.ptx.cp({SADDR}, A.data, T.uint32(16), T.cuda.cvta_generic_to_shared(T.address_of(bar[1])), x[0], "async", '
     '"bulk", "", "", "shared::cta", "global", "mbarrier::complete_tx::bytes", "L2::cache_hint", "", "", "")',
     "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [%r"),
    (f"T.ptx.cp.async_.bulk.shared__cluster.shared__cta.mbarrier__complete_tx__bytes(y[0], {ADDR}, 16, y[1])",
     f'T.ptx.cp(y[0], {SADDR}, T.uint32(16), y[1], "async", "bulk", "", "", "shared::cluster", "shared::cta", '
     '"mbarrier::complete_tx::bytes", "", "")', "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes"),
    (f"T.ptx.cp.async_.bulk.global_.shared__cta.bulk_group.L2__cache_hint(A.data, {ADDR}, 16, x[0])",
     f'T.ptx.cp(A.data, {SADDR}, T.uint32(16), x[0], "async", "bulk", "", "", "global", "shared::cta", "bulk_group", '
     '"L2::cache_hint", "", "", "")', "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%rd"),
    ("T.ptx.cp.async_.bulk.prefetch.L2.global_(A.data, 64)",
     'T.ptx.cp(A.data, T.uint32(64), "async", "bulk", "prefetch", "L2", "global", "", "")',
     "cp.async.bulk.prefetch.L2.global [%rd"),
]  # fmt: skip
IDS = [c[0].split("(")[0][6:] + f"/{i}" for i, c in enumerate(CASES)]

_PY = """
from tirx.script import tirx as T

@T.function
def f(A: T.Tensor((128,), "uint64")):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=128))
    bar = T.alloc_shared((2,), "uint64")
    x = T.alloc_local((4,), "uint64")
    y = T.alloc_local((4,), "uint32")
    {body}
"""
# TIRx's printed prologue of the kernel above
_TIRX = """
@T.function
def f(A: T.Tensor((128,), T.uint64)):
    with T.device_entry(1, 1, 1, 128, 1, 1, attrs={{"cuda.kernel_attrs": {{}}, "cuda.launch_fields": ["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}}):
        bar = T.alloc_tensor(ty_args=[T.Tensor((2,), T.uint64, scope="shared")])
        x = T.alloc_tensor(ty_args=[T.Tensor((4,), T.uint64, scope="local")])
        y = T.alloc_tensor(ty_args=[T.Tensor((4,), T.uint32, scope="local")])
        {body}
"""


def _py(body: str):
    return load_module(_PY.format(body=body), "ptx").f


@pytest.mark.parametrize("chain, printed, _ptx", CASES, ids=IDS)
def test_chain_builds_what_tirx_text_loads_to(chain, printed, _ptx):
    built = _py(chain)
    loaded = tirx.loads(_TIRX.format(body=printed))
    tirx.assert_structural_equal(loaded, built)
    # TIRx's text is Python too: the positional form builds the same IR in a kernel
    tirx.assert_structural_equal(_py(printed), built)
    # tirx prints the same positional form (int32 literal operands as T.int32(v), as TIRx does)
    text = tirx.dumps(built)
    assert printed in text, text
    assert tirx.dumps(tirx.loads(text)) == text


def test_every_opcode_is_one_op_with_a_chain():
    ops = opcodes()
    assert {"ptx.fence", "ptx.mbarrier", "ptx.wgmma", "ptx.setmaxnreg", "ptx.elect_sync", "ptx.cp",
            "ptx.prefetch", "ptx.mapa", "ptx.shfl_sync", "ptx.cvta"} <= set(ops)  # fmt: skip
    for name, opc in ops.items():
        assert lookup(name) is opc.op
        chain = getattr(T.ptx, name[4:])
        assert isinstance(chain, Chain) and chain.op is opc.op
        assert callable(chain)


#: (the named form kernels used before the table, the table chain it is an alias of, a PTX
#: line of the old template that the NVRTC output still shows)
ALIASES = [
    ("T.ptx.fence_proxy_async()", "T.ptx.fence.proxy.async_.shared__cta()", "fence.proxy.async.shared::cta;"),
    ("T.ptx.fence_mbarrier_init()", "T.ptx.fence.mbarrier_init.release.cluster()",
     "fence.mbarrier_init.release.cluster;"),
    ("T.ptx.setmaxnreg_inc(240)", "T.ptx.setmaxnreg.inc.sync.aligned.u32(240)", "setmaxnreg.inc.sync.aligned.u32 240;"),
    ("T.ptx.setmaxnreg_dec(40)", "T.ptx.setmaxnreg.dec.sync.aligned.u32(40)", "setmaxnreg.dec.sync.aligned.u32 40;"),
    (f"T.ptx.mbarrier_init({ADDR}, 1)", f"T.ptx.mbarrier.init.shared__cta.b64({ADDR}, 1)",
     "mbarrier.init.shared::cta.b64 [%r"),
    (f"T.ptx.mbarrier_arrive({ADDR})", f"T.ptx.mbarrier.arrive.shared__cta.b64({ADDR})",
     "mbarrier.arrive.shared::cta.b64 _, [%r"),
    (f"T.ptx.mbarrier_arrive_expect_tx({ADDR}, 8192)", f"T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64({ADDR}, 8192)",
     "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r"),
    (f"T.ptx.mbarrier_expect_tx({ADDR}, 64)", f"T.ptx.mbarrier.expect_tx.relaxed.cta.shared__cta.b64({ADDR}, 64)",
     "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r"),
    (f"y[0] = T.Cast('uint32', T.ptx.mbarrier_try_wait_parity({ADDR}, 0))",
     f"y[0] = T.Cast('uint32', T.ptx.mbarrier.try_wait.parity.shared__cta.b64({ADDR}, 0))",
     "mbarrier.try_wait.parity.shared::cta.b64 P0, [%r"),
    (f"y[0] = T.Cast('uint32', T.ptx.mbarrier_try_wait_parity_u32({SADDR}, 1))",
     f"y[0] = T.Cast('uint32', T.ptx.mbarrier.try_wait.parity.shared__cta.b64({SADDR}, 1))",
     "mbarrier.try_wait.parity.shared::cta.b64 P0, [%r"),
    ("T.ptx.wgmma_fence()", "T.ptx.wgmma.fence.sync.aligned()", "wgmma.fence.sync.aligned;"),
    ("T.ptx.wgmma_commit_group()", "T.ptx.wgmma.commit_group.sync.aligned()", "wgmma.commit_group.sync.aligned;"),
    ("T.ptx.wgmma_wait_group(1)", "T.ptx.wgmma.wait_group.sync.aligned(1)", "wgmma.wait_group.sync.aligned 1;"),
    ("T.ptx.tma_store_commit()", "T.ptx.cp.async_.bulk.commit_group()", "cp.async.bulk.commit_group;"),
    ("T.ptx.tma_store_wait(0)", "T.ptx.cp.async_.bulk.wait_group.read(0)", "cp.async.bulk.wait_group.read 0;"),
    ("T.ptx.prefetch_tensormap(A.data)", "T.ptx.prefetch.tensormap(A.data)", "prefetch.tensormap [%rd"),
    (f"T.ptx.tma_load_2d(y[0], A.data, 0, y[1], {ADDR})",
     f"T.ptx.cp.async_.bulk.tensor._2d.shared__cluster.global_.tile.mbarrier__complete_tx__bytes(y[0], A.data, 0, y[1], {ADDR})",
     "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r"),
    (f"T.ptx.tma_load_2d_multicast(y[0], A.data, 0, 64, {ADDR}, T.uint16(3))",
     "T.ptx.cp.async_.bulk.tensor._2d.shared__cluster.global_.tile.mbarrier__complete_tx__bytes.multicast__cluster("
     f"y[0], A.data, 0, 64, {ADDR}, T.uint16(3))",
     "mbarrier::complete_tx::bytes.multicast::cluster [%r"),
    (f"T.ptx.tma_load_3d(y[0], A.data, 0, 1, 2, {ADDR})",
     f"T.ptx.cp.async_.bulk.tensor._3d.shared__cluster.global_.tile.mbarrier__complete_tx__bytes(y[0], A.data, 0, 1, 2, {ADDR})",
     "cp.async.bulk.tensor.3d.shared::cluster.global.tile"),
    ("T.ptx.tma_store_2d(A.data, 0, 1, y[0])",
     "T.ptx.cp.async_.bulk.tensor._2d.global_.shared__cta.tile.bulk_group(A.data, 0, 1, y[0])",
     "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd"),
    (f"y[0] = T.ptx.cvta_to_shared({ADDR})", f"y[0] = {SADDR}", "cuda:__cvta_generic_to_shared"),
    (f"A[0] = T.ptx.map_shared_rank({ADDR}, 1)", f"A[0] = T.reinterpret(T.ptx.mapa({ADDR}, 1), ty=T.uint64)",
     "mapa.u64"),
]  # fmt: skip


def _alias_name(named: str) -> str:
    return re.search(r"T\.(ptx\.\w+)\(", named).group(1)


@pytest.mark.parametrize("named, chain, ptx", ALIASES, ids=[_alias_name(a[0]) for a in ALIASES])
def test_named_forms_are_aliases_of_rows(named, chain, ptx, _no_disk_cache):
    # the names kernels used before the table build the table's call: same IR, printed in
    # TIRx's form, loaded back (old spelling in the text too), and the old instruction
    built = _py(named)
    tirx.assert_structural_equal(built, _py(chain))
    text = tirx.dumps(built)
    assert _alias_name(named) + "(" not in text
    tirx.assert_structural_equal(tirx.loads(text), built)
    old_text = _TIRX.format(body=named.replace("'", '"'))
    tirx.assert_structural_equal(tirx.loads(old_text), built)
    pytest.importorskip("cuda.bindings.nvrtc")
    body = named + '\n    A[1] = x[0] + T.Cast("uint64", y[0])'
    k = tirx.compile(_py(body), target="cuda -arch=sm_90a", cache=False)
    if ptx.startswith("cuda:"):  # folded by NVVM for a static shared array: check the CUDA
        assert ptx[5:] in k.source
    else:
        assert ptx in k.ptx, k.ptx[-1500:]


def test_aliases_name_their_target():
    from tirx.ir.op import aliases

    al = aliases()
    assert {_alias_name(a[0]) for a in ALIASES} <= set(al)
    for name, a in al.items():
        assert lookup(name) is None, name  # an alias is not an op of its own
        assert lookup(a.target) is not None
        assert getattr(T, name.split(".")[0]) is not None


def test_value_forms_are_bare_rows():
    @T.function
    def g(A: T.Tensor((32,), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=2, block=32, cluster=2))
        bar = T.alloc_shared((1,), "uint64")
        e = T.ptx.elect_sync()
        m = T.ptx.mapa(T.address_of(bar[0]), 1)
        T.ptx.mbarrier.arrive.release.cluster.shared__cluster.b64(T.cuda.cvta_generic_to_shared(m), 1)
        A[T.cuda.thread_idx("x")] = T.Cast("int32", e)

    text = tirx.dumps(g)
    assert "T.ptx.elect_sync()" in text and "T.ptx.mapa(T.address_of(bar[0]), 1)" in text
    tirx.assert_structural_equal(tirx.loads(text), g)
    src = tirx.codegen.generate(g).text
    assert "elect.sync _|p, 0xffffffff;" in src and "mapa.u64" in src


# ----------------------------------------------------------------------------- round trip
_ADDRESS_OF = find(takes_address=True)
_CVTA = lookup("cuda.cvta_generic_to_shared")


def _operand(kind: str, j: int, bufs: dict, data, bits: int | None = None) -> object:
    bar, x, y, A = bufs["bar"], bufs["x"], bufs["y"], bufs["A"]
    if kind == "smem":
        return data.draw(st.sampled_from((_CVTA(_ADDRESS_OF(bar[j % 2])), y[j])), label="smem")
    if kind == "u32":
        return data.draw(st.sampled_from((IntImm(j * 8, uint32), y[j])), label="u32")
    if kind == "b32":
        return y[j]
    if kind == "imm":
        return IntImm(data.draw(st.sampled_from((16, 24, 64, 240, 256))), int32)
    if kind == "addr":
        return data.draw(st.sampled_from((A.data, x[j])), label="addr")
    if kind in ("out32", "pred"):
        return y[j]
    if kind == "out64":
        return x[j]
    if kind == "any":
        return _ADDRESS_OF(bar[0])
    if kind == "int":
        return IntImm(j, int32)
    if kind == "int64":
        return IntImm(j, uint64)
    if kind in (
        "reg",
        "dst",
        "inout",
        "pin",
    ):  # typed registers (tirx/ops/ptx_rows_*.py): as wide as their token
        return {64: x, 16: bufs["h"]}.get(bits, y)[j % 4]
    raise AssertionError(kind)


def _bits(token: str | None) -> int | None:
    dt = TOKEN_DTYPE.get(token or "")
    return as_type(dt).bits if dt and dt != "bool" else None


@st.composite
def _row_call(draw):
    opc = draw(st.sampled_from(sorted(opcodes().values(), key=lambda o: o.name)), label="opcode")
    row: Row = draw(st.sampled_from(opc.rows), label="row")
    mods = [draw(st.sampled_from((("",) if s.optional else ()) + s.choices), label=s.name) for s in row.slots]
    # a combination of modifiers the row refuses (.relaxed bulk copies without .scope, ...) is no call
    assume(row.check_mods is None or not row.check_mods({s.name: v for s, v in zip(row.slots, mods)}))
    layout = row.layout(mods)  # a register vector is one operand per lane
    chosen = {s.name for s, v in zip(row.slots, mods) if v}  # an operand `when` a slot is there iff it is
    present = [
        i
        for i, o in enumerate(layout)
        if not o.optional or (o.when in chosen if o.when else draw(st.booleans(), label=o.name))
    ]
    return opc, row, mods, present


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_row_call(), data=st.data())
def test_roundtrip_over_rows(case, data):
    opc, row, mods, present = case
    bld = IRBuilder()
    with bld, bld.function("rt"):
        A = bld.param("A", TensorType((8,), as_type("uint64")))
        with bld.device_entry(*launch_args(1, 128)):
            bufs = {
                "A": A,
                "bar": bld.alloc("bar", TensorType((2,), as_type("uint64"), "shared")),
                "x": bld.alloc("x", TensorType((4,), as_type("uint64"), "local")),
                "y": bld.alloc("y", TensorType((4,), uint32, "local")),
                "h": bld.alloc("h", TensorType((4,), as_type("uint16"), "local")),
            }
            layout = row.layout(mods)
            ops = [
                _operand(_kind(row, layout[i], mods), k, bufs, data, _bits(_token(row, layout[i], mods)))
                for k, i in enumerate(present)
            ]
            if row.check is not None:  # operand values the row refuses (cp-size 24) are no call
                assume(not row.check({layout[i].name: e for i, e in zip(present, ops)}))
            args = ops if row.bare else [*ops, *mods, _marker(row, mods, present, False)]
            c = call(opc.op, *args)
            m = match(c)
            assert m.row is row, (m.row.name, row.name)  # rows are unambiguous
            assert m.mods == (() if row.bare else tuple(mods))
            _tmpl, operands = render(m, opc.opcode)
            assert len(operands) == len(present)
            if c.ty == as_type("void"):
                bld.evaluate(c)
            else:
                bld.bind("r", c)
    f = bld.get()
    text = tirx.dumps(f)
    assert f"T.{opc.name}(" in text
    g = tirx.loads(text)
    tirx.assert_structural_equal(g, f)
    assert tirx.dumps(g) == text


@given(
    st.sampled_from(
        sorted({c for o in opcodes().values() for r in o.rows for s in r.slots for c in s.choices})
    )
)
def test_escape_is_inverted_by_unescape(mod):
    a = escape(mod)
    assert a.isidentifier() and unescape(a) == mod


# ----------------------------------------------------------------------------- NVRTC
nvrtc = pytest.importorskip  # keep the name for readers: the compile tests need cuda.bindings.nvrtc


@pytest.fixture
def _no_disk_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("chain, _printed, ptx", CASES, ids=IDS)
def test_asm_compiles_for_sm90a(chain, _printed, ptx, _no_disk_cache):
    pytest.importorskip("cuda.bindings.nvrtc")
    # the outputs are stored, so a non-volatile form (mapa, cvta) is not dropped as dead
    body = chain + '\n    A[1] = x[0] + T.Cast("uint64", y[0])'
    k = tirx.compile(_py(body), target="cuda -arch=sm_90a", cache=False)
    assert ".target sm_90a" in k.ptx
    assert ptx in k.ptx, k.ptx[-1500:]


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "body, words",
    [
        ("T.ptx.fence.proxy.asink()", ["'asink'", "alias", "async_"]),
        ("T.ptx.fence.proxy.async_.shared__cta.b64()", ["'b64'", "none (call it)"]),
        ("T.ptx.mbarrier.init.shared__cta(T.address_of(bar[0]), 1)", ["missing required modifier .type", "b64"]),
        ("T.ptx.mbarrier.init.shared__cta.b64(x[0], 1)", ["operand 'addr'", "32-bit shared address"]),
        ("T.ptx.setmaxnreg.inc.sync.aligned.u32(100)", ["multiple of 8 in 24..256", "100"]),
        ("T.ptx.wgmma.fence.sync.aligned(1)", ["takes 0 operand(s)"]),
        ('T.ptx.fence("proxy", "asink", "", "")', ["slot .proxykind is 'asink'", "alias|async"]),
        ("T.ptx.mbarrier.try_wait.parity.shared__cta.b64(A[0], T.address_of(bar[0]), 0)",
         ["wait_complete", "writable 32-bit buffer element"]),
    ],
)  # fmt: skip
def test_bad_script_modifiers_are_located(body, words):
    with pytest.raises(DiagnosticError) as ei:
        _py(body)
    msg = str(ei.value)
    for w in words:
        assert w in msg, msg
    assert re.search(r"\.py:10:5", msg), msg  # the line of the call in _PY


@pytest.mark.parametrize(
    "printed, words",
    [
        ('T.ptx.fence("proxy", "asink", "shared::cta", "")', ["slot .proxykind is 'asink'", "alias|async"]),
        ('T.ptx.fence("proxy", "async", "shared::cta")', ["takes 4 modifier strings"]),
        ('T.ptx.fence("proxy", "async", "shared::cta", "x")', ["trailing string must be"]),
        ('T.ptx.setmaxnreg(T.int32(7), "inc", "sync", "aligned", "u32", "")', ["multiple of 8"]),
        ('T.ptx.mbarrier(x[0], T.uint32(1), "init", "", "shared::cta", "b64", "")', ["operand 'addr'"]),
        ('T.ptx.cp("async", "bulk", "commit_group", "", 3)', ["string among the operands"]),
    ],
)
def test_bad_text_modifiers_are_located(printed, words):
    with pytest.raises(DiagnosticError) as ei:
        tirx.loads(_TIRX.format(body=printed))
    msg = str(ei.value)
    for w in words:
        assert w in msg, msg
    assert re.search(r":8:9", msg), msg  # the call's line and column in _TIRX


def test_api_misuse_is_a_type_error():
    with pytest.raises(TypeError, match="matches no form of fence"):
        call(lookup("ptx.fence"), "proxy", "nope", "", "")
    with pytest.raises(AttributeError, match="allowed: "):
        T.ptx.mbarrier.nope  # noqa: B018
    assert not hasattr(T.ptx.fence, "b64")


# ----------------------------------------------------------------------------- interpreter
def test_interpreter_runs_fences_and_refuses_mbarriers():
    import numpy as np

    @T.function
    def ok(A: T.Tensor((32,), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        T.ptx.fence.proxy.async_.shared__cta()
        T.ptx.fence.acq_rel.cta()
        T.ptx.setmaxnreg.inc.sync.aligned.u32(240)
        A[T.cuda.thread_idx("x")] = T.Cast("int32", T.ptx.elect_sync())

    out = np.zeros(32, np.int32)
    tirx.compile(ok, target="interp")(out)
    assert out.tolist() == [1] + [0] * 31

    @T.function
    def bad(A: T.Tensor((32,), "int32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        bar = T.alloc_shared((1,), "uint64")
        T.ptx.mbarrier.init.shared__cta.b64(T.address_of(bar[0]), 1)

    with pytest.raises(OpError, match=r"T\.ptx\.mbarrier \(mbarrier\.init"):
        tirx.compile(bad, target="interp")(np.zeros(32, np.int32))


def test_ir_holds_strings_after_operands():
    f = _py("T.ptx.mbarrier.init.shared__cta.b64(T.address_of(bar[0]), 1)")
    (c,) = [n for n in tirx.ir.post_order(f.body) if isinstance(n, Call) and n.op.name == "ptx.mbarrier"]
    assert [a.value for a in c.args[2:]] == ["init", "", "shared::cta", "b64", ""]
    assert all(isinstance(a, StringImm) for a in c.args[2:])
    assert (
        isinstance(c.args[0], Call)
        and c.args[0].op is _CVTA
        and isinstance(c.args[0].args[0].ty, PointerType)
    )
    assert isinstance(c.args[1], IntImm) and c.args[1].ty == uint32
    assert not isinstance(c.args[0], BufferLoad)


@pytest.mark.parametrize("chain, printed, _ptx", CASES, ids=IDS)
def test_text_accepts_the_chain_form(chain, printed, _ptx):
    # hand-written text may use the chains too; it loads to what the printed form loads to
    tirx.assert_structural_equal(tirx.loads(_TIRX.format(body=chain)), tirx.loads(_TIRX.format(body=printed)))


def test_bad_text_chain_is_located():
    with pytest.raises(DiagnosticError) as ei:
        tirx.loads(_TIRX.format(body="T.ptx.fence.proxy.asink()"))
    msg = str(ei.value)
    assert "'asink'" in msg and "allowed: alias, async_" in msg and ":8:9" in msg, msg


def test_half_destination_registers_compile(_no_disk_cache):
    # "=h" needs an unsigned short lvalue: a __half / __nv_bfloat16 element is written through
    # its bits (tirx/codegen/asm.py), as cvt.rn.f16.f32 into a float16 buffer does
    pytest.importorskip("cuda.bindings.nvrtc")
    t = (
        "@T.function\ndef k(F: T.Tensor((64,), T.float32), H: T.Tensor((64,), T.float16), "
        "G: T.Tensor((64,), T.bfloat16)):\n"
        '    with T.device_entry(1, 1, 1, 64, 1, 1, attrs={"cuda.kernel_attrs": {}, "cuda.launch_fields": '
        '["grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"]}):\n'
        "        T.ptx.cvt.rn.f16.f32(H[0], F[0])\n"
        "        T.ptx.cvt.rn.bf16.f32(G[0], F[1])\n"
    )
    k = tirx.compile(tirx.loads(t), target="cuda -arch=sm_90a", cache=False)
    assert "cvt.rn.f16.f32" in k.ptx and "cvt.rn.bf16.f32" in k.ptx


# ----------------------------------------------------------------------------- T.ptx["<text>"]
@pytest.mark.parametrize(
    "text, chain",
    [
        ("cp.async.ca.shared.global.L2::128B", T.ptx.cp.async_.ca.shared.global_.L2__128B),
        ("fence.proxy.async.shared::cta", T.ptx.fence.proxy.async_.shared__cta),
        ("cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes",
         T.ptx.cp.async_.bulk.tensor._2d.shared__cta.global_.tile.mbarrier__complete_tx__bytes),
        ("and.b32", T.ptx.and_.b32),
        ("elect_sync", T.ptx.elect_sync),
    ],
)  # fmt: skip
def test_subscript_is_the_dotted_chain(text, chain):
    got = T.ptx[text]
    assert isinstance(got, Chain) and repr(got) == repr(chain) and got.op is chain.op


def test_subscript_builds_the_chains_ir():
    sub = f'T.ptx["cp.async.cg.shared.global.L2::cache_hint"]({ADDR}, A.data, 16, x[0], pred=y[0])'
    dot = f"T.ptx.cp.async_.cg.shared.global_.L2__cache_hint({ADDR}, A.data, 16, x[0], pred=y[0])"
    tirx.assert_structural_equal(_py(sub), _py(dot))


@pytest.mark.parametrize(
    "body, words",
    [
        ('T.ptx["cpp.async.commit_group"]()', ["'cpp' is not a PTX instruction", "did you mean 'cp'"]),
        ('T.ptx["cp.async.ca.shared.globl"](T.address_of(bar[0]), A.data, 8)',
         ["'globl' is not a modifier allowed after cp.async.ca.shared", "did you mean 'global'"]),
        ('T.ptx["fence.proxy.async.b64"]()', ["'b64'", "allowed:"]),
        ("T.ptx[3]()", ["takes the instruction text as a string"]),
        ('T.cuda["cta_sync"]()', ["T.cuda is not subscriptable"]),
    ],
)  # fmt: skip
def test_subscript_errors_are_located(body, words):
    with pytest.raises(DiagnosticError) as ei:
        _py(body)
    msg = str(ei.value)
    for w in words:
        assert w in msg, msg
    assert re.search(r"\.py:10:5", msg), msg
    with pytest.raises((KeyError, TypeError)):
        eval(re.match(r"T\.\w+\[[^\]]*\]", body).group(0), {"T": T})  # the same error outside a kernel
