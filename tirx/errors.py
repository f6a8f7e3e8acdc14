"""Error kinds. All subclass RuntimeError directly (no extra base class to learn)."""

from __future__ import annotations

__all__ = ["DiagnosticError", "InternalError", "OpError"]


class DiagnosticError(RuntimeError):
    """An error in user script or text, located at ``file:line:col`` with a caret snippet.

    ``span`` holds the location; ``message`` the bare message; the rendered text (what
    ``str()`` returns) has the ``error:``/``-->`` form.
    """

    def __init__(self, message: str, span=None, rendered: str | None = None):
        self.message = message
        self.span = span
        super().__init__(rendered if rendered is not None else message)


class InternalError(RuntimeError):
    """A bug in tirx itself (an invariant the code relies on did not hold)."""


class OpError(RuntimeError):
    """An op is missing a handler in a backend, or was used against its declaration."""
