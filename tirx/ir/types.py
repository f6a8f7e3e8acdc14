"""Types of IR values: scalar/vector PrimType, PointerType, VoidType and TensorType.

Types are *values*: two PrimType("float32") compare equal with ``==`` and are interned,
so comparing types is cheap everywhere (structural equality, typing rules, codegen).
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
from typing import Any

import attrs

__all__ = [
    "DTYPE_NAMES",
    "DTYPE_SHORT",
    "MAX_LANES",
    "MINIFLOAT_KINDS",
    "MINIFLOAT_LIMITS",
    "SUBBYTE_INTS",
    "PointerType",
    "PrimType",
    "PtrType",
    "TensorType",
    "TirxName",
    "Type",
    "VoidType",
    "as_type",
    "bool_",
    "float16",
    "float32",
    "float64",
    "handle",
    "handle_of",
    "int32",
    "int64",
    "parse_dtype",
    "prim",
    "uint32",
    "uint64",
    "void",
]

# name -> (kind, bits). kind is one of: bool, int, uint, float, bfloat, float4, float6, float8
# (the last three are the OCP / ML "minifloats"; every element of them, the 4- and 6-bit ones
# included, takes one byte in memory: see ``PrimType.bytes``)
_BASE: dict[str, tuple[str, int]] = {
    "bool": ("bool", 1),
    "int8": ("int", 8),
    "int16": ("int", 16),
    "int32": ("int", 32),
    "int64": ("int", 64),
    "uint8": ("uint", 8),
    "uint16": ("uint", 16),
    "uint32": ("uint", 32),
    "uint64": ("uint", 64),
    "float16": ("float", 16),
    "float32": ("float", 32),
    "float64": ("float", 64),
    "bfloat16": ("bfloat", 16),
    "float8_e4m3fn": ("float8", 8),
    "float8_e4m3": ("float8", 8),
    "float8_e5m2": ("float8", 8),
    "float8_e3m4": ("float8", 8),
    "float8_e4m3fnuz": ("float8", 8),
    "float8_e4m3b11fnuz": ("float8", 8),
    "float8_e5m2fnuz": ("float8", 8),
    "float8_e8m0fnu": ("float8", 8),
    "float6_e2m3fn": ("float6", 6),
    "float6_e3m2fn": ("float6", 6),
    "float4_e2m1fn": ("float4", 4),
}
#: integers narrower than a byte: TIRx's IR has them (``T.PrimType("int4")``; its CUDA packs eight
#: int4 in an ``int``), so text that names them loads, prints and compares here; the backends
#: refuse their values (``SUBBYTE_INTS``; docs/tirx_compat.md). Not in ``DTYPE_NAMES`` (``T``
#: has no name for them, and the random programs of the fuzzers do not draw them).
SUBBYTE_INTS: dict[str, tuple[str, int]] = {
    "int4": ("int", 4),
    "uint4": ("uint", 4),
    "int2": ("int", 2),
    "uint2": ("uint", 2),
}
MINIFLOAT_KINDS = ("float4", "float6", "float8")
# the vector dtypes TIRx's ``T`` names (``T.float16x2``): these lanes of every base but these
_SCRIPT_LANES = frozenset((2, 4, 8, 16, 32, 64))
_NO_SCRIPT_VECTORS = frozenset(("bool", "bfloat16"))
# (largest finite value, smallest finite value) of each minifloat; the bit-level definitions
# and conversions live in tirx/ir/minifloat.py (which its tests check against these)
MINIFLOAT_LIMITS: dict[str, tuple[float, float]] = {
    "float8_e4m3fn": (448.0, -448.0),
    "float8_e4m3": (240.0, -240.0),  # IEEE-style: the top exponent holds inf and NaN
    "float8_e5m2": (57344.0, -57344.0),
    "float8_e3m4": (15.5, -15.5),
    "float8_e4m3fnuz": (240.0, -240.0),
    "float8_e4m3b11fnuz": (30.0, -30.0),
    "float8_e5m2fnuz": (57344.0, -57344.0),
    "float8_e8m0fnu": (2.0**127, 2.0**-127),  # unsigned, no zero
    "float6_e2m3fn": (7.5, -7.5),
    "float6_e3m2fn": (28.0, -28.0),
    "float4_e2m1fn": (6.0, -6.0),
}
# ``float8_e4m3`` is a dtype of its own (TIRx's and ml_dtypes': IEEE-style, largest 240), not
# ``float8_e4m3fn`` (OCP: no inf, largest 448); ``e4m3`` is short for the OCP one CUDA has
_ALIASES = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}
DTYPE_NAMES: tuple[str, ...] = tuple(_BASE)
_ALL = {**_BASE, **SUBBYTE_INTS}  # every base a PrimType may have
_LANES_RE = re.compile(r"^([a-z0-9_]+?)x([0-9]+)$")  # ASCII digits only (\d takes any script's)
#: The most lanes a vector type may have: TIRx's (TVM's) limit, lanes being a signed 16-bit
#: field of the IR's data type there (``lanes < 32768``).
MAX_LANES = 32767
#: How many vector types and dtype spellings the lookup caches keep (least recently used go).
TYPE_CACHE_SIZE = 4096


def _stable_hash(s: str) -> int:
    """A process-independent 63-bit hash of a string (never Python's seeded str hash)."""
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little") >> 1


class Type:
    """Base of all IR types.

    ``_sh`` is the type's deterministic structural hash (an int). The built-in types
    compute it once at construction; other subclasses get it from their ``repr``.
    """

    __slots__ = ()

    @property
    def _sh(self) -> int:
        return _stable_hash("type:" + repr(self))

    def script(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError


def _no_eq(**kw: Any) -> Any:
    return attrs.field(init=False, eq=False, repr=False, **kw)


@attrs.frozen(slots=True, repr=False, eq=False)
class PrimType(Type):
    """A scalar or vector primitive type, e.g. ``float32`` or ``float16x8``."""

    base: str
    lanes: int = 1
    # derived once at construction (types are compared and queried everywhere)
    kind: str = _no_eq()
    bits: int = _no_eq()
    _sh: int = _no_eq()

    def __attrs_post_init__(self) -> None:
        info = _ALL.get(self.base) if isinstance(self.base, str) else None
        if info is None:
            raise ValueError(f"PrimType.base: unknown dtype {self.base!r}")
        if type(self.lanes) is not int or self.lanes < 1:
            raise ValueError(f"PrimType.lanes must be a positive int, got {self.lanes!r}")
        if self.lanes > MAX_LANES:
            raise ValueError(f"PrimType.lanes must be at most {MAX_LANES} (TIRx's limit), got {self.lanes}")
        object.__setattr__(self, "kind", info[0])
        object.__setattr__(self, "bits", info[1])
        object.__setattr__(self, "_sh", _stable_hash(f"prim:{self.base}x{self.lanes}"))

    # value equality with an identity fast path (built-in dtypes are interned); a dtype equals
    # its name, as TIRx's does (``T.constexpr(A.dtype == "float32")`` in a kernel), so the
    # hash is the name's
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not PrimType:
            return self.name == other if type(other) is str else NotImplemented
        return self.base == other.base and self.lanes == other.lanes

    def __ne__(self, other: object) -> bool:
        if self is other:
            return False
        if type(other) is not PrimType:
            return self.name != other if type(other) is str else NotImplemented
        return self.base != other.base or self.lanes != other.lanes

    def __hash__(self) -> int:
        return hash(self.base) if self.lanes == 1 else hash(self.name)

    @property
    def name(self) -> str:
        return self.base if self.lanes == 1 else f"{self.base}x{self.lanes}"

    @property
    def dtype(self) -> PrimType:
        """TIRx's ``ty.dtype`` (its data type): the dtype itself, which prints, compares and hashes
        as its name (``str(x.ty.dtype).startswith("uint")``)."""
        return self

    @property
    def element(self) -> PrimType:
        return self if self.lanes == 1 else prim(self.base)

    def with_lanes(self, lanes: int) -> PrimType:
        return prim(self.base, lanes)

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def is_float(self) -> bool:
        return self.kind in ("float", "bfloat", "float8", "float6", "float4")

    @property
    def is_minifloat(self) -> bool:
        """A float of 8 bits or fewer: no C arithmetic of its own (computed in float32)."""
        return self.kind in MINIFLOAT_KINDS

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    @property
    def bytes(self) -> int:
        """Bytes in memory: bool and the 4/6-bit floats take a whole byte per element (as
        ``__nv_fp4_e2m1`` / ``__nv_fp6_e2m3`` and ml_dtypes' arrays do)."""
        return max(1, self.bits // 8) * self.lanes

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"PrimType({self.name!r})"

    def script(self) -> str:
        """``T.float16x2``; a dtype TIRx's ``T`` has no name for prints as ``T.PrimType("boolx2")``."""
        if self.base not in SUBBYTE_INTS and (
            self.lanes == 1 or (self.lanes in _SCRIPT_LANES and self.base not in _NO_SCRIPT_VECTORS)
        ):
            return f"T.{self.name}"
        return f'T.PrimType("{self.name}")'


@attrs.frozen(slots=True, repr=False)
class VoidType(Type):
    """The type of nothing; ``T.Ptr(T.void)`` is an opaque handle."""

    _sh: int = _no_eq(default=_stable_hash("void"))

    def __str__(self) -> str:
        return "void"

    def __repr__(self) -> str:
        return "VoidType()"

    def script(self) -> str:
        return "T.void"


@attrs.frozen(slots=True, repr=False)
class PointerType(Type):
    """A pointer to ``element`` living in storage ``scope`` (global, shared, shared.dyn, local...)."""

    element: Type
    scope: str = "global"
    _sh: int = _no_eq()

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.element, Type):
            raise TypeError(f"PointerType.element must be a Type, got {type(self.element).__name__}")
        if not isinstance(self.scope, str):
            raise TypeError(f"PointerType.scope must be a str, got {type(self.scope).__name__}")
        sh = _stable_hash(f"ptr:{self.element._sh}:{self.scope}")
        object.__setattr__(self, "_sh", sh)

    def __str__(self) -> str:
        return f"{self.element}*" if self.scope == "global" else f"{self.element}*@{self.scope}"

    def __repr__(self) -> str:
        return f"PointerType({self.element!r}, {self.scope!r})"

    def script(self) -> str:
        if self.scope == "global":
            return f"T.Ptr({self.element.script()})"
        return f'T.Ptr({self.element.script()}, "{self.scope}")'


#: the storage scopes a tensor may name: TIRx's ``MemoryScope`` values (apache-tvm-tirx 0.1.0a4)
#: and tirx's local spellings; a misspelled one (``"globl"``) is refused where it is written
MEMORY_SCOPES = frozenset((
    "global", "shared", "shared.dyn", "warp", "local", "tmem", "wmma.matrix_a", "wmma.matrix_b",
    "wmma.accumulator", "mma.matrixA", "mma.matrixB", "mma.matrixC", "global.ddr", "global.vtcm",
    "metal.simdgroup", "metal.cooperative_tensor", "texture", "global.texture", "global.texture-1d",
    "global.texture-nchw", "global.texture-nhwc", "global.texture-weight", "trn.sbuf", "trn.psum", "amx.tmm",
    "register", "local.var",
))  # fmt: skip


@attrs.frozen(slots=True, repr=False)
class TensorType(Type):
    """The annotation type ``T.Tensor(shape, dtype, scope=..., strides=..., align=...)``.

    It describes a buffer before a Buffer node (with its data pointer) exists; the
    IRBuilder turns it into a Buffer when it is used as a parameter or allocation.
    """

    shape: tuple[Any, ...]
    dtype: PrimType
    scope: str = "global"
    strides: tuple[Any, ...] = ()
    align: int = 0
    elem_offset: Any = None
    data: Any = None
    layout: Any = None  # a tirx.ir.layout.Layout (T.Tensor(..., layout=...))

    def __repr__(self) -> str:
        return f"TensorType({self.shape!r}, {self.dtype!r}, scope={self.scope!r})"

    def __str__(self) -> str:
        return f"Tensor({self.shape}, {self.dtype}, {self.scope})"


_PRIM_CACHE: dict[str, PrimType] = {}  # scalars: one per base dtype, a fixed set


@functools.lru_cache(maxsize=TYPE_CACHE_SIZE)
def _vector(base: str, lanes: int) -> PrimType:
    return PrimType(base, lanes)


def prim(base: str, lanes: int = 1) -> PrimType:
    """Interned PrimType constructor. Scalars are interned for good; vector types through a
    bounded LRU (types compare by value, so a type rebuilt after eviction is still equal)."""
    if lanes == 1 and type(lanes) is int:
        t = _PRIM_CACHE.get(base) if type(base) is str else None
        if t is None:
            t = PrimType(base, lanes)  # raises for an unknown base: only known ones are kept
            _PRIM_CACHE[base] = t
        return t
    if type(base) is not str or type(lanes) is not int:
        return PrimType(base, lanes)  # not hashable or not valid: PrimType says why
    return _vector(base, lanes)


void = VoidType()
handle = PointerType(void, "global")

#: TVM's short dtype spellings in ``T`` (``T.bf16``, ``T.i32``, ``T.boolean``), for both front ends
DTYPE_SHORT = {
    "f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "boolean": "bool",
}  # fmt: skip
# a dtype string may use them too, with TIRx's "float" / "int" / "uint" (32 bits): T.Tensor((n,), "f16"),
# "floatx4"; printed in full (T.float16, T.float32x4)
_ALIASES.update(DTYPE_SHORT, float="float32", int="int32", uint="uint32")


def handle_of(dtype: Any = None, storage_scope: str = "global") -> PointerType:
    """``T.handle(dtype, scope)``, TIRx's pointer type constructor (both front ends):
    ``T.handle("float32", "shared")`` is ``T.Ptr(T.float32, "shared")``, ``T.handle("tensormap")``
    a TMA descriptor, ``T.Ptr(T.TensorMap())``."""
    if dtype in ("TensorMap", "tensormap", "CUtensorMap", "cuTensorMap"):
        return tensormap_ptr
    if type(storage_scope) is not str:
        raise TypeError(f"T.handle: storage_scope must be a str, got {type(storage_scope).__name__}")
    return PointerType(void if dtype is None else as_prim(dtype, "T.handle dtype"), storage_scope)


bool_ = prim("bool")
int32 = prim("int32")
int64 = prim("int64")
float16 = prim("float16")
float32 = prim("float32")
float64 = prim("float64")
uint8 = prim("uint8")
uint32 = prim("uint32")
uint64 = prim("uint64")
bfloat16 = prim("bfloat16")
#: a TMA descriptor (TIRx's ``T.Ptr(T.TensorMap())``): a kernel parameter passed by value as a
#: ``__grid_constant__`` CUtensorMap, seen by the body through its address
tensormap_ptr = PointerType(uint8, "tensormap")


def parse_dtype(name: str) -> Type:
    """Parse a dtype string ('float32', 'float16x4', 'handle', 'void'); ``ValueError`` for
    an unknown one or one with more than ``MAX_LANES`` lanes."""
    if type(name) is not str:
        raise ValueError(f"unknown dtype {name!r}")
    return _parse_dtype(name)


@functools.lru_cache(maxsize=TYPE_CACHE_SIZE)  # bounded: any text can ask for a dtype
def _parse_dtype(name: str) -> Type:
    if name == "handle":
        return handle
    if name == "void":
        return void
    base = _ALIASES.get(name, name)
    if base in _ALL:
        return prim(base)
    m = _LANES_RE.match(name)
    if m is None or _ALIASES.get(m.group(1), m.group(1)) not in _ALL:
        raise ValueError(f"unknown dtype {name!r}")
    lanes = int(m.group(2))
    if not 1 <= lanes <= MAX_LANES:
        raise ValueError(f"dtype {name!r}: a vector has 1 to {MAX_LANES} lanes (TIRx's limit), not {lanes}")
    return prim(_ALIASES.get(m.group(1), m.group(1)), lanes)


def as_type(x: Any, what: str = "dtype") -> Type:
    """Coerce a dtype string, a Type, or a dtype-like object to a Type."""
    if isinstance(x, Type):
        return x
    if isinstance(x, str):
        try:
            return parse_dtype(x)
        except ValueError:
            raise ValueError(f"{what}: unknown dtype {x!r}") from None
    conv = getattr(x, "__tirx_type__", None)
    if conv is not None:
        return conv()
    # numpy / torch dtypes (numpy only if the caller already imported it)
    np = sys.modules.get("numpy")
    if np is not None and (isinstance(x, np.dtype) or (isinstance(x, type) and issubclass(x, np.generic))):
        x = np.dtype(x)
    name = getattr(x, "name", None)
    if not isinstance(name, str):
        name = str(x)
    name = name.replace("torch.", "")
    alias = {"float": "float32", "half": "float16", "double": "float64", "int": "int32", "long": "int64"}
    name = alias.get(name, name)
    try:
        return parse_dtype(name)
    except ValueError:
        raise TypeError(f"{what}: cannot interpret {x!r} as a dtype") from None


def as_prim(x: Any, what: str = "dtype") -> PrimType:
    t = as_type(x, what)
    if not isinstance(t, PrimType):
        raise TypeError(f"{what}: expected a primitive dtype, got {t}")
    return t


class TirxName(type):
    """The class of a TIRx name (its Python IR API, ``tvm_tirx.ir`` / ``tvm_tirx.tirx``) whose
    constructor takes what tirx's node ``_of`` refuses by design: calling it builds that node,
    and ``isinstance(x, Name)`` / ``issubclass`` answer for ``_of``, so passes that match on the
    TIRx name (and ``tirx.ffi``'s type-keyed callbacks, which match by ``isinstance``) see
    tirx's nodes. (Where the arguments agree, the TIRx name is tirx's class itself:
    ``tirx.ir.If`` is ``IfThenElse``; docs/tirx_compat.md, "The IR's Python API".)"""

    _of: type

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._of)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, cls._of)


class PtrType(metaclass=TirxName):
    """TIRx's ``ir.PtrType(element_type, scope="global")``: tirx's ``PointerType``, the element
    a Type or a dtype string, the scope a string (or TIRx's ``MemoryScope``, by its text)."""

    _of = PointerType

    def __new__(cls, element_type: Any, scope: Any = "global", *, loc: Any = None) -> Any:
        el = as_type(element_type, "PtrType element_type")
        return PointerType(el, scope if isinstance(scope, str) else str(scope))
