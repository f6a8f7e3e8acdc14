"""TIRx indexes what ``compile`` returns by function name (``ex["main"](...)``), also when it
compiled one function; tirx gives one function a kernel object, which that index gives back."""

from __future__ import annotations

from typing import Any


class ByOwnName:
    """``kernel[name]``: the kernel itself when ``name`` is its function's name."""

    def _function_name(self) -> str:
        return str(self.func.name)  # type: ignore[attr-defined]

    def __getitem__(self, name: str) -> Any:
        own = self._function_name()
        if name != own:
            raise KeyError(f"the compiled function is {own!r}, not {name!r}")
        return self
