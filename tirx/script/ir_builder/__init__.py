"""TIRx's ``tvm.script.ir_builder`` path: ``IRBuilder`` and, as ``ir_builder.tirx``, the builder
functions (``T.function_``, ``T.arg_``, ``T.bind_``, ...: ``tirx.script.protocol``), so code that
builds IR the way TIRx's tests do imports them from where TIRx has them."""

from tirx.script.protocol import IRBuilder

from . import tirx

__all__ = ["IRBuilder", "tirx"]
