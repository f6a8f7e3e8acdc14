"""NVSHMEM device ops (``T.nvshmem.*``): PE queries, one-sided put/get between the
symmetric buffers of PEs (one per GPU), signals, ordering and the all-PE barrier.

Each op lowers to the NVSHMEM device API call TIRx's lowering makes (``nvshmem_*`` for the
thread scope, ``nvshmemx_*_warp`` / ``_block`` for the collective scopes), with the
``nvshmem.h``/``nvshmemx.h`` prelude and the ``nvshmem`` codegen feature, which makes
``tirx.compile`` build the kernel with relocatable device code and link it against NVSHMEM's
device library (``tirx.runtime.nvshmem``). String arguments lower to NVSHMEM's own named
constants (``"ge"`` is ``NVSHMEM_CMP_GE``, ``"add"`` is ``NVSHMEM_SIGNAL_ADD``): TIRx
0.1.0a4 writes integers there that do not match NVSHMEM 3.4's enums.

The interpreter runs them for one PE (``my_pe() == 0``, ``n_pes() == 1``, put/get to PE 0
copy locally) or for N PEs simulated on the CPU under ``tirx.interp.nvshmem.World``.
``T.nvshmem.getmem_nbi`` (and ``putmem_nbi``, ``putmem_signal_nbi``) is callable and has
``.warp`` / ``.block`` members, as in TIRx; the IR holds the ``*_warp``/``*_block`` ops.
"""

from __future__ import annotations

from typing import Any

from ..ir.op import Helper, declare, get, lookup
from ..ir.types import int32, void

__all__ = [
    "CMP",
    "SIGNAL_OPS",
    "WAIT_TYPES",
    "NVSHMEMGetMemNBINamespace",
    "NVSHMEMPutMemNBINamespace",
    "NVSHMEMPutMemSignalNBINamespace",
]

#: codegen feature set by every NVSHMEM op: the runtime compiles and links such kernels apart
FEATURE = "nvshmem"

#: ``cmp`` strings of ``wait_until`` and their NVSHMEM constants
CMP = {
    "eq": "NVSHMEM_CMP_EQ",
    "ne": "NVSHMEM_CMP_NE",
    "gt": "NVSHMEM_CMP_GT",
    "ge": "NVSHMEM_CMP_GE",
    "lt": "NVSHMEM_CMP_LT",
    "le": "NVSHMEM_CMP_LE",
}
#: ``sig_op`` strings and their NVSHMEM constants
SIGNAL_OPS = {"set": "NVSHMEM_SIGNAL_SET", "add": "NVSHMEM_SIGNAL_ADD"}
#: ``wait_until`` type strings: (NVSHMEM's type name in ``nvshmem_<name>_wait_until``, C type, tirx dtype)
WAIT_TYPES = {
    "uint64_t": ("uint64", "uint64_t", "uint64"),
    "uint64": ("uint64", "uint64_t", "uint64"),
    "int64_t": ("int64", "int64_t", "int64"),
    "int64": ("int64", "int64_t", "int64"),
    "uint32_t": ("uint32", "uint32_t", "uint32"),
    "uint32": ("uint32", "uint32_t", "uint32"),
    "int32_t": ("int32", "int32_t", "int32"),
    "int32": ("int32", "int32_t", "int32"),
    "int": ("int", "int", "int32"),
}

# NVRTC needs std:: type traits that NVSHMEM's device headers name (NVRTC has cuda::std only)
HEADERS = Helper(
    "tirx_nvshmem",
    """\
// NVSHMEM device API (tirx.runtime.nvshmem links libnvshmem_device)
#include <cuda/std/type_traits>
namespace std {
using cuda::std::conditional; using cuda::std::enable_if; using cuda::std::is_floating_point;
using cuda::std::is_integral; using cuda::std::is_same; using cuda::std::is_signed; using cuda::std::is_unsigned;
}
#include <nvshmem.h>
#include <nvshmemx.h>""",
)


def _c(template: str, lit: dict[int, dict[str, str]] | None = None):
    """A lowering: ``template`` with ``{i}`` the i-th argument's C expression (a string
    argument is replaced by its NVSHMEM constant from ``lit[i]``)."""

    def lower(cg: Any, c: Any) -> str:
        cg.need(HEADERS)
        cg.features.add(FEATURE)
        parts = []
        for i, a in enumerate(c.args):
            if lit and i in lit:
                v = getattr(a, "value", None)
                if v not in lit[i]:
                    raise cg.error(
                        f"T.{c.op.name}: unsupported argument {v!r} (one of {', '.join(lit[i])})", c
                    )
                parts.append(lit[i][v])
            else:
                parts.append(cg.expr(a))
        return template.format(*parts)

    return lower


def _c_wait_until(cg: Any, c: Any) -> str:
    cg.need(HEADERS)
    cg.features.add(FEATURE)
    ivar, cmp, value, ty = c.args
    name, ctype, _ = WAIT_TYPES[ty.value]
    return f"nvshmem_{name}_wait_until(({ctype}*)({cg.expr(ivar)}), {CMP[cmp.value]}, ({ctype})({cg.expr(value)}))"


def _interp(kind: str, scope: str = "thread"):
    def impl(fc: Any, call: Any):
        from tirx.ops.semantics import nvshmem as sim

        wait = WAIT_TYPES[call.args[3].value][2] if kind == "wait_until" else "uint64"
        return sim.compile_op(kind, scope, fc, call, wait)

    return impl


# --------------------------------------------------------------------------- script surface
class _Scoped:
    """``T.nvshmem.getmem_nbi`` as TIRx spells it: calling it is the thread-scope op,
    ``.warp`` / ``.block`` are the collective-scope ops."""

    __tirx_namespace__ = True  # the script parser keeps this class's attribute-error messages
    _base = ""

    @property
    def warp(self) -> Any:
        return lookup(f"nvshmem.{self._base}_warp")

    @property
    def block(self) -> Any:
        return lookup(f"nvshmem.{self._base}_block")

    def __call__(self, *args: Any, span: Any = None, **kwargs: Any) -> Any:
        return get(f"nvshmem.{self._base}")(*args, span=span, **kwargs)

    def __repr__(self) -> str:
        return f"T.nvshmem.{self._base}"


class NVSHMEMGetMemNBINamespace(_Scoped):
    """``T.nvshmem.getmem_nbi`` (``.warp``, ``.block``)."""

    _base = "getmem_nbi"


class NVSHMEMPutMemNBINamespace(_Scoped):
    """``T.nvshmem.putmem_nbi`` (``.warp``, ``.block``)."""

    _base = "putmem_nbi"


class NVSHMEMPutMemSignalNBINamespace(_Scoped):
    """``T.nvshmem.putmem_signal_nbi`` (``.warp``, ``.block``)."""

    _base = "putmem_signal_nbi"


_SCOPE_DOC = {"thread": "by each calling thread", "warp": "by the whole warp (one transfer)",
              "block": "by the whole block (one transfer)"}  # fmt: skip
_API = {"thread": "nvshmem_{}", "warp": "nvshmemx_{}_warp", "block": "nvshmemx_{}_block"}

declare(
    "nvshmem.my_pe", "", int32, pure=False, device_only=True, nonneg=True,
    doc="this PE's number (nvshmem_my_pe())",
    cuda=_c("nvshmem_my_pe()"), interp=_interp("my_pe"),
)  # fmt: skip
declare(
    "nvshmem.n_pes", "", int32, pure=False, device_only=True, nonneg=True,
    doc="the number of PEs (nvshmem_n_pes())",
    cuda=_c("nvshmem_n_pes()"), interp=_interp("n_pes"),
)  # fmt: skip
declare(
    "nvshmem.barrier_all", "", void, pure=False, device_only=True,
    doc="all-PE barrier that also completes this PE's puts (nvshmem_barrier_all(); one thread per PE)",
    cuda=_c("nvshmem_barrier_all()"), interp=_interp("barrier_all"),
)  # fmt: skip
declare(
    "nvshmem.fence", "", void, pure=False, device_only=True,
    doc="orders this thread's puts to each PE (nvshmem_fence())",
    cuda=_c("nvshmem_fence()"), interp=_interp("fence"),
)  # fmt: skip
declare(
    "nvshmem.quiet", "", void, pure=False, device_only=True,
    doc="waits until this thread's puts and gets are complete (nvshmem_quiet())",
    cuda=_c("nvshmem_quiet()"), interp=_interp("fence"),
)  # fmt: skip
declare(
    "nvshmem.signal_op", "p i s i", void, pure=False, device_only=True,
    params="sig_addr signal sig_op pe", choices={2: tuple(SIGNAL_OPS)},
    doc='atomically updates the uint64 signal word at sig_addr on PE pe ("set" | "add")',
    cuda=_c("nvshmemx_signal_op((uint64_t*)({0}), (uint64_t)({1}), {2}, {3})", {2: SIGNAL_OPS}),
    interp=_interp("signal_op"),
)  # fmt: skip
declare(
    "nvshmem.wait_until", "p s i s?", void, pure=False, device_only=True,
    params="ivar cmp cmp_value type", defaults={3: "uint64_t"},
    choices={1: tuple(CMP), 3: tuple(WAIT_TYPES)},
    doc="waits until the local symmetric word ivar compares true with cmp_value (type: its C type)",
    cuda=_c_wait_until, interp=_interp("wait_until"),
)  # fmt: skip

_SURFACE = {
    "getmem_nbi": NVSHMEMGetMemNBINamespace,
    "putmem_nbi": NVSHMEMPutMemNBINamespace,
    "putmem_signal_nbi": NVSHMEMPutMemSignalNBINamespace,
}
for _scope in ("thread", "warp", "block"):
    _sfx = "" if _scope == "thread" else f"_{_scope}"
    _conv = _scope != "thread"  # the whole warp/block calls it together
    for _dir, _what in (
        ("get", "from PE pe's src into the local dst"),
        ("put", "from the local src into PE pe's dst"),
    ):
        _name = f"{_dir}mem_nbi"
        declare(
            f"nvshmem.{_name}{_sfx}", "p p i i", void, pure=False, device_only=True,
            params="dst src nelems pe", convergent=_conv,
            script=_SURFACE[_name]() if _scope == "thread" else None,
            doc=f"non-blocking copy of nelems bytes {_what}, {_SCOPE_DOC[_scope]} ({_API[_scope].format(_name)})",
            cuda=_c(_API[_scope].format(_name) + "({0}, {1}, (size_t)({2}), {3})"),
            interp=_interp(_dir, _scope),
        )  # fmt: skip
    declare(
        f"nvshmem.putmem_signal_nbi{_sfx}", "p p i p i s i", void, pure=False, device_only=True,
        params="dst src nelems sig_addr signal sig_op pe", choices={5: tuple(SIGNAL_OPS)}, convergent=_conv,
        script=_SURFACE["putmem_signal_nbi"]() if _scope == "thread" else None,
        doc=f"putmem_nbi then signal_op on PE pe once the data has arrived, {_SCOPE_DOC[_scope]} "
        f"({_API[_scope].format('putmem_signal_nbi')})",
        cuda=_c(
            _API[_scope].format("putmem_signal_nbi")
            + "({0}, {1}, (size_t)({2}), (uint64_t*)({3}), (uint64_t)({4}), {5}, {6})",
            {5: SIGNAL_OPS},
        ),
        interp=_interp("put_signal", _scope),
    )  # fmt: skip
del _scope, _sfx, _conv, _dir, _what, _name
