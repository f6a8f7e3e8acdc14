"""Error kinds. All subclass RuntimeError directly (no extra base class to learn)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["DiagnosticError", "InternalError", "OpError"]


class DiagnosticError(RuntimeError):
    """An error in user script or text, located at ``file:line:col`` with a caret snippet.

    ``span`` holds the location; ``message`` the bare message; the rendered text (what
    ``str()`` returns) has the ``error:``/``-->`` form.
    """

    def __init__(self, message: str, span=None, rendered: str | None = None):
        self.message = message
        self.span = span
        self._diagnostics: list[DiagnosticError] | None = None
        self._find_more: Callable[[], list[DiagnosticError]] | None = None
        super().__init__(rendered if rendered is not None else message)

    @property
    def diagnostics(self) -> list[DiagnosticError]:
        """Every error found in the input, this one first. ``tirx.loads`` looks for the later
        ones (recovering at the next statement) only when this is first read, so loading bad
        text costs no more than stopping at the first error unless someone asks."""
        if getattr(self, "_diagnostics", None) is None:
            find = getattr(self, "_find_more", None)
            self._find_more = None
            self._diagnostics = [self, *(find() if find is not None else ())]
        return list(self._diagnostics or [self])

    def __reduce__(self) -> tuple:
        """Pickles without the search for later errors (a closure over the loader's state):
        what was found so far travels; an unsearched error carries only itself."""
        state = {k: v for k, v in self.__dict__.items() if k != "_find_more"}
        return (type(self), self.args, state)


class DiagnosticValueError(DiagnosticError, ValueError):
    """A script error whose cause is a ``ValueError`` (a check of the user's values): also a
    ``ValueError``, as TIRx lets the original exception's class through, so code written for
    TIRx (``pytest.raises(ValueError, ...)`` around a kernel) catches it."""


class DiagnosticTypeError(DiagnosticError, TypeError):
    """A script error whose cause is a ``TypeError``: also a ``TypeError`` (see
    ``DiagnosticValueError``)."""


def with_cause_class(e: DiagnosticError) -> DiagnosticError:
    """``e`` made a ``DiagnosticValueError`` / ``DiagnosticTypeError`` when the exception at
    the end of its chain of causes is a ``ValueError`` / ``TypeError`` (not a tirx
    diagnostic); done where a diagnostic leaves the frontend, after every handler inside."""
    if type(e) is not DiagnosticError:
        return e
    cause = e.__cause__
    while isinstance(cause, DiagnosticError):
        cause = cause.__cause__
    for base, cls in ((ValueError, DiagnosticValueError), (TypeError, DiagnosticTypeError)):
        if isinstance(cause, base):
            e.__class__ = cls
            break
    return e


class InternalError(RuntimeError):
    """A bug in tirx itself (an invariant the code relies on did not hold)."""


class OpError(RuntimeError):
    """An op is missing a handler in a backend, or was used against its declaration."""
