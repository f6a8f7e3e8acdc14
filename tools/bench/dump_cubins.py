"""Write the example kernels' cubins (for ``cuobjdump -sass``) to a folder: ``python dump_cubins.py OUT``."""

from __future__ import annotations

import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    import tirx

    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    path = os.path.join(ROOT, "examples", "kernels", "elementwise_add.py")
    spec = importlib.util.spec_from_file_location("ex_add", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name in ("add_f16_i64", "add_vec_f16"):
        k = tirx.compile(mod.KERNELS[name](), target="cuda -arch=sm_90a", cache=False)
        with open(os.path.join(out, name + ".cubin"), "wb") as fh:
            fh.write(k.cubin)


if __name__ == "__main__":
    main()
