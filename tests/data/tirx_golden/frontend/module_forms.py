# Module forms: module attributes holding a string constant node (T.StringImm: printed
# T.StringImm("..."), a bare "..." being a str) and a type value (T.StringType, printed
# T.String()), and a function without parameters (no `from __future__` line).
from tirx.script import tirx as T


@T.ir_module
class Mod:
    T.module_attrs({"tag": T.StringImm("label"), "type": T.StringType(), "plain": "s"})

    @T.function
    def main():
        T.evaluate(1)


f = Mod
