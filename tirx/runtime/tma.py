"""Host-side TMA plans: ``cuTensorMapEncodeTiled`` through ``cuda.bindings.driver``.

A :class:`TensorMapPlan` describes a 2-d (or higher) tiled view of a row-major tensor:
element dtype as a plain string (``"float16"``, ``"bfloat16"``, ...), the tensor's shape,
the box (tile) shape copied per ``cp.async.bulk.tensor`` and the shared-memory swizzle.
``plan.encode(ptr)`` returns the 128-byte ``CUtensorMap`` as bytes. Two ways to hand it
to a kernel:

* by value (``plan.param(tensor)``): the kernel parameter is ``T.Ptr(T.uint8,
  "tensormap")``; the CUDA backend declares it ``const __grid_constant__`` (a 64-byte
  aligned 128-byte struct) and the body sees the parameter's address, which the TMA ops
  take (``T.ptx.tma_load_2d(dst, TM, ...)``);
* in global memory (``plan.device(tensor)``): a 16-element ``uint64`` CUDA tensor taken
  as ``T.Tensor((16,), "uint64")`` and passed as ``T.address_of(TM[0])``.

Either way the kernel prefetches it with ``T.ptx.prefetch_tensormap``.

Shapes are given outermost first, like the tensor (``(rows, cols)``); the driver wants
them innermost first, which :meth:`encode` does.
"""

from __future__ import annotations

import collections
import struct
import threading
from typing import Any

import attrs

__all__ = ["TensorMapPlan", "encode_tiled", "new_descriptor", "tensor_map"]

_DTYPES = {
    "uint8": ("UINT8", 1),
    "uint16": ("UINT16", 2),
    "uint32": ("UINT32", 4),
    "int32": ("INT32", 4),
    "uint64": ("UINT64", 8),
    "int64": ("INT64", 8),
    "float16": ("FLOAT16", 2),
    "float32": ("FLOAT32", 4),
    "float64": ("FLOAT64", 8),
    "bfloat16": ("BFLOAT16", 2),
    # fp8: TMA copies bytes (the driver has no fp8 element type; UINT8 moves the same bits)
    "float8_e4m3fn": ("UINT8", 1),
    "float8_e5m2": ("UINT8", 1),
}
_SWIZZLE = {0: "NONE", 32: "32B", 64: "64B", 128: "128B"}


@attrs.frozen
class TensorMapPlan:
    dtype: str  # element dtype, a plain string as in the IR
    shape: tuple  # global shape, outermost first
    box: tuple  # tile shape, outermost first
    swizzle: int = 128  # bytes: 0, 32, 64, 128
    l2_promotion: int = 256  # bytes: 0, 64, 128, 256

    def __attrs_post_init__(self) -> None:
        if self.dtype not in _DTYPES:
            raise ValueError(f"TensorMapPlan: dtype must be one of {sorted(_DTYPES)}, got {self.dtype!r}")
        if len(self.shape) != len(self.box) or not 1 <= len(self.shape) <= 5:
            raise ValueError("TensorMapPlan: shape and box must have the same rank, 1..5")
        if self.swizzle not in _SWIZZLE:
            raise ValueError(f"TensorMapPlan: swizzle must be 0, 32, 64 or 128, got {self.swizzle}")
        esz = _DTYPES[self.dtype][1]
        for b in self.box:
            if not 1 <= b <= 256:
                raise ValueError(f"TensorMapPlan: box dims must be 1..256, got {self.box}")
        if self.swizzle and self.box[-1] * esz > self.swizzle:
            raise ValueError(
                f"TensorMapPlan: the box's inner extent ({self.box[-1] * esz} bytes) exceeds the swizzle "
                f"span ({self.swizzle} bytes)"
            )
        if (self.shape[-1] * esz) % 16:
            raise ValueError("TensorMapPlan: the row pitch must be a multiple of 16 bytes")

    @property
    def box_bytes(self) -> int:
        n = _DTYPES[self.dtype][1]
        for b in self.box:
            n *= b
        return n

    def encode(self, data_ptr: int) -> bytes:
        """The 128-byte CUtensorMap for a contiguous row-major tensor at ``data_ptr``."""
        if data_ptr % 16:
            raise ValueError("TensorMapPlan: the tensor's address must be 16-byte aligned")
        enc = _ENCODERS.get(self)
        if enc is None:
            enc = _ENCODERS[self] = _Encoder(self)
        return enc(int(data_ptr))

    def param(self, tensor: Any) -> bytes:
        """The descriptor of ``tensor`` (checked against the plan) as the 128 bytes a kernel
        takes by value: a ``T.Ptr(T.uint8, "tensormap")`` parameter, generated as
        ``const __grid_constant__`` (the kernel body sees its address)."""
        self._check(tensor)
        return self.encode(tensor.data_ptr())

    def device(self, tensor: Any) -> Any:
        """The descriptor as a (16,) uint64 torch tensor on ``tensor``'s device (for kernels
        that read it from global memory: a ``T.Tensor((16,), "uint64")`` parameter)."""

        self._check(tensor)
        return words_on_device(self.encode(tensor.data_ptr()), tensor.device)

    def _check(self, tensor: Any) -> None:
        want = tuple(int(s) for s in self.shape)
        if tuple(tensor.shape) != want:
            raise ValueError(
                f"TensorMapPlan: tensor shape {tuple(tensor.shape)} differs from the plan's {want}"
            )
        if not tensor.is_contiguous():
            raise ValueError("TensorMapPlan: the tensor must be contiguous (row-major)")
        tname = str(tensor.dtype).replace("torch.", "")
        if tname != self.dtype:
            raise TypeError(f"TensorMapPlan: tensor dtype {tname} differs from the plan's {self.dtype}")


def words_on_device(raw: bytes, device: Any) -> Any:
    """128 descriptor bytes as a ``(16,)`` uint64 torch tensor on ``device``, for kernels that
    read a descriptor from global memory (``TensorMapPlan.device``, the GEMM's templates:
    ``tirx.kernels._host.map_template``); copied from pageable memory, complete on return."""
    import torch

    words = torch.frombuffer(bytearray(raw), dtype=torch.int64).to(device, copy=True)
    return words.view(torch.uint64) if hasattr(torch, "uint64") else words


class _Encoder:
    """One plan's ``cuTensorMapEncodeTiled`` call with everything but the address prepared: the
    driver entry point called through ``ctypes`` with its argument arrays built once (a call
    costs a few microseconds, where building cuda-bindings' argument objects each time cost
    tens), or through cuda-bindings where the driver library cannot be opened by name."""

    def __init__(self, plan: TensorMapPlan) -> None:
        import ctypes

        from cuda.bindings import driver as d

        from . import driver as _drv

        ok, why = _drv.probe()
        if not ok:
            raise RuntimeError(f"TensorMapPlan.encode needs a CUDA driver: {why}")
        name, esz = _DTYPES[plan.dtype]
        rank = len(plan.shape)
        dims = [int(x) for x in reversed(plan.shape)]
        strides = []
        acc = esz
        for x in reversed(plan.shape[1:]):
            acc *= int(x)
            strides.append(acc)
        box = [int(x) for x in reversed(plan.box)]
        l2 = {0: "NONE", 64: "L2_64B", 128: "L2_128B", 256: "L2_256B"}[plan.l2_promotion]
        enums = (
            getattr(d.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{name}"),
            d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            getattr(d.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{_SWIZZLE[plan.swizzle]}"),
            getattr(d.CUtensorMapL2promotion, f"CU_TENSOR_MAP_L2_PROMOTION_{l2}"),
            d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
        self.plan = plan
        self.raw = (enums, rank, dims, strides, box)
        self._mine = threading.local()
        self.fn = _libcuda_encode()
        if self.fn is None:  # cuda-bindings' wrapper (``_bindings``)
            return
        u64, u32 = ctypes.c_uint64, ctypes.c_uint32
        self.c_args = (
            int(enums[0]),
            rank,
            (u64 * rank)(*dims),
            (u64 * max(rank - 1, 1))(*(strides or [0])),
            (u32 * rank)(*box),
            (u32 * rank)(*([1] * rank)),
            int(enums[1]),
            int(enums[2]),
            int(enums[3]),
            int(enums[4]),
        )

    def __call__(self, ptr: int, rows: int | None = None) -> bytes:
        """The descriptor of the tensor at ``ptr``; ``rows``: another outermost extent than the
        plan's (same row pitch and box), so one encoder serves every row count of a matrix."""
        if self.fn is None:
            return self._bindings(ptr, rows)
        dt, rank, dims, strides, box, estr, il, sw, l2, oob = self.c_args
        # this thread's output buffer and dims (the driver call releases the GIL: another thread's
        # encode may run meanwhile), made once per thread
        mine = getattr(self._mine, "v", None)
        if mine is None:
            mine = self._mine.v = self._thread_state()
        addr, tdims, string_at = mine[1], mine[2], mine[3]
        if rows is not None:
            tdims[rank - 1] = rows
            dims = tdims
        err = self.fn(addr, dt, rank, ptr, dims, strides, box, estr, il, sw, l2, oob)
        if err:
            raise RuntimeError(f"cuTensorMapEncodeTiled failed: CUresult {err} for {self.plan}")
        return string_at(addr, 128)

    def _thread_state(self) -> tuple:
        """(buffer, its 64-byte aligned address, a dims array to set the row count in, string_at)."""
        import ctypes

        rank = self.c_args[1]
        buf = ctypes.create_string_buffer(128 + 64)
        dims = (ctypes.c_uint64 * rank)(*self.raw[2])
        return (buf, ctypes.addressof(buf) + (-ctypes.addressof(buf)) % 64, dims, ctypes.string_at)

    def _bindings(self, ptr: int, rows: int | None = None) -> bytes:
        """The same descriptor through cuda-bindings (its argument objects built per call)."""
        from cuda.bindings import driver as d

        (dt, il, sw, l2, oob), rank, dims, strides, box = self.raw
        if rows is not None:
            dims = [*dims[:-1], rows]
        err, tm = d.cuTensorMapEncodeTiled(
            dt,
            rank,
            ptr,
            [d.cuuint64_t(x) for x in dims],
            [d.cuuint64_t(x) for x in strides],
            [d.cuuint32_t(x) for x in box],
            [d.cuuint32_t(1)] * rank,
            il,
            sw,
            l2,
            oob,
        )
        if int(err) != 0:
            raise RuntimeError(f"cuTensorMapEncodeTiled failed: {err} for {self.plan}")
        words = [int(w) for w in tm.opaque]
        return struct.pack(f"<{len(words)}Q", *words)


_ENCODERS: dict = {}
_LIBCUDA: list = []


def _libcuda_encode() -> Any:
    """``cuTensorMapEncodeTiled`` of the driver library through ctypes, or None."""
    if not _LIBCUDA:
        import ctypes

        fn = None
        try:
            lib = ctypes.CDLL("libcuda.so.1")
            fn = lib.cuTensorMapEncodeTiled
            p, u32 = ctypes.c_void_p, ctypes.c_uint32
            fn.argtypes = [
                p,
                ctypes.c_int,
                u32,
                p,
                p,
                p,
                p,
                p,
                ctypes.c_int,
                ctypes.c_int,
                ctypes.c_int,
                ctypes.c_int,
            ]
            fn.restype = ctypes.c_int
        except (OSError, AttributeError):
            fn = None
        _LIBCUDA.append(fn)
    return _LIBCUDA[0]


# CUtensorMapDataType by element dtype (TIRx's descriptor_dtype): the types TMA has, else the
# unsigned integer of the same width (TMA moves bits; fp8 and int8 are bytes)
_CU_DTYPES = {
    "float16": "FLOAT16", "bfloat16": "BFLOAT16", "float32": "FLOAT32", "float64": "FLOAT64",
    "int32": "INT32", "uint32": "UINT32", "int64": "INT64", "uint64": "UINT64", "uint16": "UINT16",
    "int16": "UINT16", "uint8": "UINT8", "int8": "UINT8",
}  # fmt: skip


def _cu_dtype(dtype: str, force: int) -> int:
    """The CUtensorMapDataType value for ``dtype`` (``force`` >= 0: that value, as TIRx's
    ``force_cu_dtype``)."""
    if force >= 0:
        return force
    from ..ir.types import PrimType, as_type

    name = _CU_DTYPES.get(dtype)
    if name is None:
        t = as_type(dtype)
        if isinstance(t, PrimType) and t.lanes == 1 and t.bits in (8, 16):  # fp8 / 8-bit codes, 16-bit floats
            name = "UINT8" if t.bits == 8 else "UINT16"
    if name is None:
        raise ValueError(
            f"tensor map encoding: descriptor_dtype {dtype} has no TMA data type (a sub-byte "
            "type needs force_cu_dtype=, one of CUDA's packed 16U4 / 16U6 types)"
        )
    from cuda.bindings import driver as d

    return int(getattr(d.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{name}"))


def new_descriptor() -> bytearray:
    """Host storage of one CUtensorMap (TIRx's stack allocation of a ``tensormap``): 128 bytes,
    filled by :func:`encode_tiled` and passed to a kernel by value."""
    return bytearray(128)


def encode_tiled(desc: Any, ptr: int, dtype: str, rank: int, operands: tuple, interleave: int = 0,
                 swizzle: int = 0, l2_promotion: int = 0, oob_fill: int = 0, force_cu_dtype: int = -1) -> int:  # fmt: skip
    """TIRx's tiled tensor-map encoding call on the host: ``cuTensorMapEncodeTiled`` of the
    tensor at ``ptr`` into ``desc`` (from :func:`new_descriptor`). ``operands``: ``rank`` global
    dimensions, ``rank - 1`` byte strides, ``rank`` box dimensions and ``rank`` element strides,
    innermost first; the options are CUDA's enum values. 0, as the driver's status (a failure
    raises, naming the operands)."""
    if not isinstance(desc, bytearray) or len(desc) != 128:
        raise TypeError(
            "tensor map encoding: the descriptor must be host storage of 128 bytes (new_descriptor(), TIRx's stack_alloca of a tensormap)"
        )
    ops = [int(x) for x in operands]
    if not 1 <= rank <= 5 or len(ops) != 4 * rank - 1:
        raise ValueError(f"tensor map encoding: rank {rank} takes {4 * rank - 1} operands after the pointers")
    dims, strides = ops[:rank], ops[rank : 2 * rank - 1]
    box, estr = ops[2 * rank - 1 : 3 * rank - 1], ops[3 * rank - 1 :]
    dt = _cu_dtype(str(dtype), int(force_cu_dtype))
    why = (
        f"cuTensorMapEncodeTiled failed for descriptor_dtype={dtype}, rank={rank}, address {int(ptr):#x}, "
        f"dims {dims}, byte strides {strides}, box {box}, element strides {estr}, interleave={interleave}, "
        f"swizzle={swizzle}, l2_promotion={l2_promotion}, oob_fill={oob_fill}"
    )
    if any(x < 0 for x in ops):
        raise ValueError(why + ": a negative operand")
    key = (dt, rank, int(ptr), tuple(ops), int(interleave), int(swizzle), int(l2_promotion), int(oob_fill))
    done = _ENCODED.get(key)
    if done is not None:  # the same tensor and box again (a host program called in a loop)
        _ENCODED.move_to_end(key)
        desc[:] = done
        return 0
    from . import driver as _drv

    ok, no = _drv.probe()
    if not ok:
        raise RuntimeError(f"tensor map encoding needs a CUDA driver: {no}")
    fn = _libcuda_encode()
    if fn is not None:
        import ctypes

        u64, u32 = ctypes.c_uint64, ctypes.c_uint32
        buf = ctypes.create_string_buffer(128 + 64)
        addr = ctypes.addressof(buf) + (-ctypes.addressof(buf)) % 64
        err = fn(addr, dt, rank, int(ptr), (u64 * rank)(*dims), (u64 * max(rank - 1, 1))(*(strides or [0])),
                 (u32 * rank)(*box), (u32 * rank)(*estr), interleave, swizzle, l2_promotion, oob_fill)  # fmt: skip
        if err:
            raise RuntimeError(f"{why}: CUresult {err}")
        desc[:] = ctypes.string_at(addr, 128)
        _remember(key, desc)
        return 0
    from cuda.bindings import driver as d

    err, tm = d.cuTensorMapEncodeTiled(
        d.CUtensorMapDataType(dt), rank, int(ptr), [d.cuuint64_t(x) for x in dims],
        [d.cuuint64_t(x) for x in strides], [d.cuuint32_t(x) for x in box], [d.cuuint32_t(x) for x in estr],
        d.CUtensorMapInterleave(interleave), d.CUtensorMapSwizzle(swizzle),
        d.CUtensorMapL2promotion(l2_promotion), d.CUtensorMapFloatOOBfill(oob_fill),
    )  # fmt: skip
    if int(err) != 0:
        raise RuntimeError(f"{why}: {err}")
    words = [int(w) for w in tm.opaque]
    desc[:] = struct.pack(f"<{len(words)}Q", *words)
    _remember(key, desc)
    return 0


#: descriptors encoded by :func:`encode_tiled`, by everything the encoding reads (a pure function
#: of its operands): a host program called again on the same tensors copies 128 bytes instead of
#: calling the driver; the oldest of more than ``_ENCODED_MAX`` are forgotten
_ENCODED: collections.OrderedDict = collections.OrderedDict()
_ENCODED_MAX = 1024


def _remember(key: tuple, desc: bytearray) -> None:
    _ENCODED[key] = bytes(desc)
    if len(_ENCODED) > _ENCODED_MAX:
        _ENCODED.popitem(last=False)


def tensor_map(tensor: Any, box: tuple, swizzle: int = 128) -> Any:
    """Shortcut: the device descriptor of ``tensor`` tiled by ``box`` (outermost first)."""
    tname = str(tensor.dtype).replace("torch.", "")
    return TensorMapPlan(tname, tuple(int(s) for s in tensor.shape), tuple(box), swizzle).device(tensor)
