"""The compile target as a value: :class:`Target`, its string form (``"cuda -arch=sm_90a"``)
and TIRx's config dict (``T.target({"kind": "cuda", "arch": "sm_90a"})``).

A leaf module (it imports nothing of tirx), so the text loader, the printer and ``T.target``
can use it without importing the compiler (``tirx.target``, which re-exports these names).
A ``Target`` may be a function attribute, as TIRx stores ``T.func_attr({"target": ...})``;
it prints as TIRx prints it (:func:`target_text`) and loads back equal.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

import attrs

__all__ = ["Target", "from_config", "parse_target", "target_text"]


@attrs.frozen
class Target:
    kind: str  # "cuda" | "interp"
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
    if not isinstance(target, str):
        raise TypeError(f"target must be a str or tirx.target.Target, got {type(target).__name__}")
    parts = shlex.split(target)
    if not parts:
        raise ValueError("target: empty target string")
    kind, rest = parts[0], parts[1:]
    if kind not in ("cuda", "interp", "nvidia/cuda"):
        raise ValueError(
            f"target: unknown target kind {kind!r} (use 'cuda', 'cuda -arch=sm_90a' or 'interp')"
        )
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
    if kind != "cuda":
        raise ValueError(f"T.target: kind {kind!r} is not supported by tirx (only 'cuda')")
    unknown = set(target_config) - {"kind", "arch", *CUDA_DEFAULTS}
    if unknown:
        raise ValueError(f"T.target: unsupported keys {sorted(unknown)}")
    for k, v in CUDA_DEFAULTS.items():
        got = target_config.get(k, v)
        if (list(got) if isinstance(got, tuple) else got) != v:
            raise ValueError(f"T.target: {k}={got!r} differs from CUDA's {v!r}")
    arch = target_config.get("arch")
    if arch is not None and not isinstance(arch, str):
        raise TypeError(f"T.target: arch must be a str, got {type(arch).__name__}")
    return Target("cuda", arch or None)  # "arch": "" is no arch (printed without the key)


def target_text(t: Target) -> str:
    """``T.target({...})`` as TIRx prints a CUDA target (sorted keys, its defaults filled in),
    or ``T.target("<string>")`` for what a config dict cannot say (options, ``interp``)."""
    if t.kind == "cuda" and not t.options:
        cfg = {"kind": "cuda", **CUDA_DEFAULTS} | ({"arch": t.arch} if t.arch else {})
        body = ", ".join(f"{json.dumps(k)}: {json.dumps(cfg[k], ensure_ascii=False)}" for k in sorted(cfg))
        return f"T.target({{{body}}})"
    return f"T.target({json.dumps(str(t), ensure_ascii=False)})"
