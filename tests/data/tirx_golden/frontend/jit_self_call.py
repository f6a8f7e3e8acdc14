"""A @T.jit function that calls itself: the call is of the function being built (TIRx prints
``T.Call(Module.main, [...], ty=T.Tuple())``), not a new specialization (corpus: a TIRx jit test)."""

from tirx.script import tirx as T


@T.jit(private=True)
def main(x: T.int32, y: T.int32):
    main(x, y)
    main(y, x)


f = main.specialize()
