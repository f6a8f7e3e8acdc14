"""The compile target as a value: :class:`Target`, its string form (``"cuda -arch=sm_90a"``)
and TIRx's config dict (``T.target({"kind": "cuda", "arch": "sm_90a"})``).

A leaf module (it imports nothing of tirx), so the text loader, the printer and ``T.target``
can use it without importing the compiler (``tirx.target``, which re-exports these names).
A ``Target`` may be a function attribute, as TIRx stores ``T.func_attr({"target": ...})``;
it prints as TIRx prints it (:func:`target_text`) and loads back equal.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

__all__ = [
    "Target",
    "backend_config_json",
    "check_backend_config",
    "from_config",
    "parse_backend_config",
    "parse_target",
    "target_text",
]


@attrs.frozen
class Target:
    kind: str  # "cuda" | "interp" | "llvm" (TIRx's host CPU target: tirx runs it on the interpreter)
    arch: str | None = None
    options: tuple = ()

    def __str__(self) -> str:
        s = self.kind
        if self.arch:
            s += f" -arch={self.arch}"
        for o in self.options:
            s += f" {o}"
        return s


def parse_target(target: Any) -> Target:
    if isinstance(target, Target):
        return target
    if isinstance(target, dict):  # TIRx's config dict: {"kind": "cuda", "arch": "sm_90a"}
        return from_config(target)
    if not isinstance(target, str):
        raise TypeError(f"target must be a str, a TIRx config dict or tirx.target.Target, got {type(target).__name__}")
    parts = shlex.split(target)
    if not parts:
        raise ValueError("target: empty target string")
    kind, rest = parts[0], parts[1:]
    if kind not in ("cuda", "interp", "nvidia/cuda", "llvm"):
        raise ValueError(
            f"target: unknown target kind {kind!r} (use 'cuda', 'cuda -arch=sm_90a', 'interp' or 'llvm')"
        )
    if kind == "llvm":  # its options (-mtriple=..., -mcpu=...) are kept and printed, not used
        return Target("llvm", None, tuple(rest))
    kind = "cuda" if kind == "nvidia/cuda" else kind
    arch = None
    opts = []
    it = iter(rest)
    for p in it:
        if p.startswith("-arch="):
            arch = p.split("=", 1)[1]
        elif p == "-arch":
            arch = next(it, None)
        elif p.startswith("--gpu-architecture="):
            arch = p.split("=", 1)[1]
        else:
            opts.append(p)
    if arch is not None and not (arch.startswith("sm_") or arch.startswith("compute_")):
        raise ValueError(f"target: -arch must look like sm_90a, got {arch!r}")
    return Target(kind, arch, tuple(opts))


#: what TIRx fills in for a CUDA target (and prints); tirx accepts these keys at these values
CUDA_DEFAULTS: dict[str, Any] = {
    "keys": ["cuda", "gpu"],
    "max_num_threads": 1024,
    "tag": "",
    "thread_warp_size": 32,
}


def _check_keys(cfg: dict, own: tuple, defaults: dict, whose: str) -> None:
    """A config dict names only ``kind``, ``own`` keys and ``defaults`` keys at their values."""
    unknown = set(cfg) - {"kind", *own, *defaults}
    if unknown:
        raise ValueError(f"T.target: unsupported keys {sorted(unknown)} of a {cfg.get('kind')!r} target")
    for k, v in defaults.items():
        got = cfg.get(k, v)
        if (list(got) if isinstance(got, tuple) else got) != v:
            raise ValueError(f"T.target: {k}={got!r} differs from {whose} {v!r}")


def from_config(target_config: Any, host: Any = None) -> Target:
    """``T.target(config)``: a TIRx config dict (kind ``cuda``; TIRx's CUDA defaults accepted
    when equal to CUDA's) or a target string."""
    if host is not None:
        raise ValueError("T.target: tirx compiles device code only; a host target is not supported")
    if isinstance(target_config, str):
        return parse_target(target_config)
    if not isinstance(target_config, dict):
        raise TypeError(f"T.target: target_config must be a dict or str, got {type(target_config).__name__}")
    kind = target_config.get("kind")
    if kind == "llvm":
        return _llvm_from_config(target_config)
    if kind != "cuda":
        raise ValueError(f"T.target: kind {kind!r} is not supported by tirx (only 'cuda' and 'llvm')")
    _check_keys(target_config, ("arch",), CUDA_DEFAULTS, "CUDA's")
    arch = target_config.get("arch")
    if arch is not None and not isinstance(arch, str):
        raise TypeError(f"T.target: arch must be a str, got {type(arch).__name__}")
    return Target("cuda", arch or None)  # "arch": "" is no arch (printed without the key)


#: the keys of TIRx's ``llvm`` config dict tirx keeps (as ``-key=value`` options); ``keys`` and
#: ``tag`` are TIRx's fixed defaults for it
LLVM_KEYS = ("mtriple", "mcpu", "mattr", "mabi", "num-cores", "opt-level")
LLVM_DEFAULTS: dict[str, Any] = {"keys": ["cpu"], "tag": ""}


def _llvm_from_config(cfg: dict) -> Target:
    """TIRx's host target, ``{"kind": "llvm", "mtriple": ...}``: the keys kept as options."""
    _check_keys(cfg, LLVM_KEYS, LLVM_DEFAULTS, "the llvm target's")
    opts = []
    for k in LLVM_KEYS:
        if k in cfg:
            v = cfg[k]
            if not isinstance(v, (str, int)) or isinstance(v, bool):
                raise TypeError(f"T.target: {k} must be a str or int, got {type(v).__name__}")
            opts.append(f"-{k}={v}")
    return Target("llvm", None, tuple(opts))


def _llvm_config(t: Target) -> dict | None:
    """The config dict TIRx prints for an ``llvm`` target, or None when an option has no key."""
    cfg: dict[str, Any] = {"kind": "llvm", **LLVM_DEFAULTS}
    for o in t.options:
        k, eq, v = o.lstrip("-").partition("=")
        if not eq or k not in LLVM_KEYS:
            return None
        cfg[k] = int(v) if k in ("num-cores", "opt-level") and v.isdigit() else v
    return cfg


def target_text(t: Target) -> str:
    """``T.target({...})`` as TIRx prints a CUDA or llvm target (sorted keys, its defaults
    filled in), or ``T.target("<string>")`` for what a config dict cannot say (options,
    ``interp``)."""
    llvm = _llvm_config(t) if t.kind == "llvm" else None
    if llvm is not None:
        body = ", ".join(f"{json.dumps(k)}: {json.dumps(llvm[k], ensure_ascii=False)}" for k in sorted(llvm))
        return f"T.target({{{body}}})"
    if t.kind == "cuda" and not t.options:
        cfg = {"kind": "cuda", **CUDA_DEFAULTS} | ({"arch": t.arch} if t.arch else {})
        body = ", ".join(f"{json.dumps(k)}: {json.dumps(cfg[k], ensure_ascii=False)}" for k in sorted(cfg))
        return f"T.target({{{body}}})"
    return f"T.target({json.dumps(str(t), ensure_ascii=False)})"


# --------------------------------------------------------------------------- backend_config
#: TIRx's CUDA compile settings (``tvm_tirx.backend.cuda.BackendConfig``): key -> kind of value
BACKEND_CONFIG_KEYS: dict[str, str] = {
    "arch": "str",
    "compiler": "str",
    "target_format": "str",
    "nvcc": "flags",
    "nvrtc": "flags",
    "ptxas": "flags",
}
#: flags that choose the architecture, the artifact or the tool: backend_config says those
#: (``arch``, ``target_format``, ``ptxas``), never a flag list (TIRx's reserved flags)
RESERVED_FLAGS = frozenset(
    (
        "-arch", "--gpu-architecture", "-gpu-architecture", "--gpu-name", "-arch-name", "-gencode",
        "--generate-code", "-code", "--gpu-code", "-o", "--output-file", "-optf", "--options-file",
        "--cubin", "-cubin", "--ptx", "-ptx", "--fatbin", "-fatbin", "-Xptxas", "--ptxas-options",
    )
)  # fmt: skip


def _check_cuda_config(cfg: Any) -> dict:
    if not isinstance(cfg, Mapping):
        raise TypeError("CUDA backend_config must be a mapping")
    out: dict = {}
    for name, value in cfg.items():
        kind = BACKEND_CONFIG_KEYS.get(name)
        if kind is None:
            raise ValueError(f"Unknown CUDA backend_config key: {name!r}")
        if kind == "flags":
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise TypeError(f"CUDA backend_config.{name} must be a sequence of strings")
            if not all(isinstance(v, str) for v in value):
                raise TypeError(f"CUDA backend_config.{name} must be a sequence of strings")
            for item in value:
                if item.split("=", 1)[0] in RESERVED_FLAGS:
                    raise ValueError(f"{name}: {item!r} is managed by backend_config or the compiler adapter")
            out[name] = list(value)
        elif not isinstance(value, str):
            raise TypeError(f"CUDA backend_config.{name} must be a string")
        else:
            out[name] = value
    if "arch" in out and re.fullmatch(r"sm_[0-9]+[af]?", out["arch"]) is None:
        raise ValueError("CUDA backend_config.arch must name a real architecture, e.g. sm_100a")
    if "compiler" in out and out["compiler"] not in ("nvcc", "nvrtc"):
        raise ValueError("CUDA backend_config.compiler must be 'nvcc' or 'nvrtc'")
    if "target_format" in out and out["target_format"] not in ("ptx", "cubin", "fatbin"):
        raise ValueError("CUDA backend_config.target_format must be 'ptx', 'cubin', or 'fatbin'")
    if out.get("compiler") == "nvrtc" and out.get("target_format") == "fatbin":
        raise ValueError("NVRTC cannot produce fatbin; use compiler='nvcc'")
    return out


def check_backend_config(config: Any) -> dict:
    """TIRx's ``backend_config`` (``{"cuda": {...}}``) checked as TIRx checks it (fixed keys and
    value types, no flag that picks the arch, artifact or tool); a fresh copy. None is ``{}``."""
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise TypeError("backend_config must be a mapping of backend names to configurations")
    out = {}
    for name, value in config.items():
        if name != "cuda":
            raise ValueError(f"backend_config does not yet support backend {name!r}")
        out[name] = _check_cuda_config(value)
    return out


def backend_config_json(config: Any) -> str:
    """The config as TIRx stores it (a device entry's ``attrs["backend_config"]``): compact
    JSON, keys sorted, flag lists in their order."""
    return json.dumps(check_backend_config(config), sort_keys=True, separators=(",", ":"))


def parse_backend_config(text: Any) -> dict:
    """A stored ``backend_config`` (JSON text; empty: none) back as a checked dict."""
    if not isinstance(text, str):
        raise TypeError(f"backend_config: expected the JSON text TIRx stores, got {type(text).__name__}")
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as e:
        raise ValueError(f"backend_config: not JSON: {e}") from None
    return check_backend_config(value)
