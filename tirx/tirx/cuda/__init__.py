"""``tvm_tirx.tirx.cuda`` under tirx's name (see ``tirx.tirx``): ``iket``."""

from . import iket

__all__ = ["iket"]
