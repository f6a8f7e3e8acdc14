# An empty module (`pass` in the class body), as TIRx prints it.
from tirx.script import tirx as T


@T.ir_module
class Blank:
    pass


f = Blank
