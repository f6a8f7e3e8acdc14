"""Module import graph of the tirx package, built from the source with ``ast``.

Every ``import`` statement counts: module level, inside functions and methods, inside
``try``/``if`` (only ``if TYPE_CHECKING:`` blocks are left out: they never run). Relative
imports are resolved, and so is the package-dir mapping of ``pyproject.toml``
(``tirx.grammar`` lives in ``grammar/``, ...).

Reports
  (a) layering: imports from ``tirx.ir.*`` to anything outside ``tirx.ir`` other than the
      standard library, ``attrs``, ``numpy`` and the leaf modules below the IR
      (``BELOW_IR``: modules that import nothing of the package but each other);
  (b) import cycles: strongly connected components (size > 1) of the graph;
  (c) the layer order (``LAYERS``, bottom to top, issue #30): imports that go up a layer, or
      between two units of one layer that must not know each other (``INDEPENDENT``), and
      modules that belong to no layer.

Usage: ``python tools/import_graph.py [--edges]``; exits 1 when there is any violation of
(a), a cycle or a module without a layer. Upward imports are listed, not fatal here:
``tests/test_layering.py`` (which runs this through :func:`analyze`) holds the allowlist.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# the IR layer may import these besides itself and the standard library
IR_LAYER = "tirx.ir"
IR_ALLOWED_EXTERNAL = {"attrs", "numpy", "__future__"}
# modules of the package that sit below the IR (they import nothing of the package but
# each other: the error kinds, and diagnostics rendering the IR's well-formedness errors)
BELOW_IR = {"tirx.errors", "tirx.diagnostics"}

# The layers, bottom to top (docs/contributing.md, "Layers"). A module may import its own layer and the ones
# below it. Each unit is a package (with its submodules) or a module; ROOT_PACKAGE alone
# names just the package's ``__init__`` (the lazy facade: ``tirx.dumps`` & co. import their
# layer on first use), not everything under it.
ROOT_PACKAGE = "tirx"
LAYERS: tuple[tuple[str, ...], ...] = (
    # leaves: errors and diagnostics, the target value, the autoload hook
    ("tirx.errors", "tirx.diagnostics", "tirx.target_spec", "tirx.autoload"),
    ("tirx.ir",),  # nodes, types, structural equality
    # op declarations; atomic file writes (print through the IR hook); tvm_ffi's structural API
    ("tirx.ops", "tirx.fileio", "tirx.ffi", "tirx.sym"),
    ("tirx.surface",),  # IRBuilder, FormSpecs and forms, comment attachment
    ("tirx.grammar", "tirx.script"),  # the two front ends (text, Python)
    # TIRx's Python API names (tvm_tirx.tirx) for ported host code; TIRx's kernel helper classes
    # (tvm_tirx.backend.cuda.lang), written on the script namespace
    ("tirx.tirx", "tirx.backend"),
    ("tirx.printer",),
    ("tirx.passes",),
    (
        "tirx.codegen",
        "tirx.runtime",
        "tirx.interp",
        "tirx.target",
        "tirx.pipeline",
        "tirx.tir_pipelines",
    ),  # backends, compile()
    (ROOT_PACKAGE,),  # the package facade: import tirx; tirx.loads / dumps / compile
    ("tirx.kernels",),  # the kernel library, written in tirx script (compiled through the facade)
    ("tirx.testing",),
    ("tirx.tools",),
)
# units of one layer that must not import each other (the text grammar knows nothing of
# the Python frontend, and the frontend nothing of the grammar)
INDEPENDENT: tuple[tuple[str, str], ...] = (("tirx.grammar", "tirx.script"),)


@dataclass(frozen=True)
class Import:
    src: str  # importing module
    dst: str  # imported module (internal: a module of the package; external: top-level name)
    line: int
    in_function: bool
    internal: bool


@dataclass
class Graph:
    modules: dict[str, Path] = field(default_factory=dict)
    imports: list[Import] = field(default_factory=list)

    def internal_edges(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {m: set() for m in self.modules}
        for imp in self.imports:
            if imp.internal and imp.dst != imp.src:
                out[imp.src].add(imp.dst)
        return out


def _package_dirs(root: Path) -> tuple[dict[str, str], list[str]]:
    """(package -> directory, packages) from pyproject.toml."""
    import tomllib  # type: ignore[import-not-found, unused-ignore]  # Python >= 3.11; a dev tool

    data = tomllib.loads((root / "pyproject.toml").read_text())
    st = data["tool"]["setuptools"]
    return dict(st["package-dir"]), list(st["packages"])


def _package_path(pkg: str, pkg_dirs: dict[str, str], root: Path) -> Path:
    """The directory of ``pkg``: the longest mapped prefix plus the rest of the name."""
    parts = pkg.split(".")
    for i in range(len(parts), 0, -1):
        prefix = ".".join(parts[:i])
        if prefix in pkg_dirs:
            return root.joinpath(pkg_dirs[prefix], *parts[i:])
    return root.joinpath(*parts)


def discover(root: Path = ROOT) -> dict[str, Path]:
    """Module name -> source file, for every module of the listed packages."""
    pkg_dirs, packages = _package_dirs(root)
    mods: dict[str, Path] = {}
    for pkg in packages:
        d = _package_path(pkg, pkg_dirs, root)
        for f in sorted(d.glob("*.py")):
            mods[pkg if f.stem == "__init__" else f"{pkg}.{f.stem}"] = f
    return mods


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk_imports(tree: ast.AST):
    """Yield (node, in_function) for every import that can run."""

    def visit(node: ast.AST, in_fn: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, in_fn
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for sub in child.orelse:  # the ``else`` of ``if TYPE_CHECKING`` does run
                    yield from visit(ast.Module(body=[sub], type_ignores=[]), in_fn)
            else:
                fn = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                yield from visit(child, in_fn or fn)

    yield from visit(tree, False)


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a module of the package, else None."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        cand = ".".join(parts[:i])
        if cand in modules:
            return cand
    return None


def build(root: Path = ROOT) -> Graph:
    g = Graph(modules=discover(root))
    for mod, path in g.modules.items():
        tree = ast.parse(path.read_text(), str(path))
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node, in_fn in _walk_imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base_parts = pkg.split(".")
                    if node.level > 1:
                        base_parts = base_parts[: -(node.level - 1)]
                    base = ".".join(base_parts)
                    full = f"{base}.{node.module}" if node.module else base
                else:
                    full = node.module or ""
                # ``from pkg import sub``: an edge to the submodule when it is one
                targets = [
                    f"{full}.{a.name}" if f"{full}.{a.name}" in g.modules else full for a in node.names
                ]
            for t in dict.fromkeys(targets):
                dst = _resolve(t, g.modules)
                if dst is not None:
                    g.imports.append(Import(mod, dst, node.lineno, in_fn, True))
                else:
                    g.imports.append(Import(mod, t.split(".")[0], node.lineno, in_fn, False))
    return g


def _in_layer(mod: str, layer: str) -> bool:
    return mod == layer or mod.startswith(layer + ".")


def layering_violations(g: Graph) -> list[Import]:
    """Imports from the IR layer to anything but itself, BELOW_IR, stdlib, attrs, numpy."""
    stdlib = set(sys.stdlib_module_names)
    out = []
    for imp in g.imports:
        if not _in_layer(imp.src, IR_LAYER):
            continue
        if imp.internal:
            if _in_layer(imp.dst, IR_LAYER) or imp.dst in BELOW_IR:
                continue
        elif imp.dst in stdlib or imp.dst in IR_ALLOWED_EXTERNAL:
            continue
        out.append(imp)
    # the modules below the IR must stay leaves (or they would carry the IR upward)
    for imp in g.imports:
        if imp.src in BELOW_IR and imp.internal and imp.dst not in BELOW_IR:
            out.append(imp)
    return out


def layer_of(mod: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> tuple[int, str] | None:
    """(layer index, unit) of ``mod``: the unit that is ``mod`` or a package holding it."""
    for i, units in enumerate(layers):
        for unit in units:
            if mod == unit or (unit != ROOT_PACKAGE and mod.startswith(unit + ".")):
                return i, unit
    return None


def unlayered(g: Graph, layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    """Modules that belong to no layer (a new top-level module must be placed in LAYERS)."""
    return sorted(m for m in g.modules if layer_of(m, layers) is None)


def upward_imports(
    g: Graph,
    layers: tuple[tuple[str, ...], ...] = LAYERS,
    independent: tuple[tuple[str, str], ...] = INDEPENDENT,
) -> list[Import]:
    """Internal imports to a higher layer, or between two ``independent`` units of one layer
    (``if TYPE_CHECKING:`` imports never run, so they are not in the graph)."""
    apart = {frozenset(p) for p in independent}
    out = []
    for imp in g.imports:
        if not imp.internal:
            continue
        a, b = layer_of(imp.src, layers), layer_of(imp.dst, layers)
        if a is None or b is None:
            continue  # reported by unlayered()
        if b[0] > a[0] or (a[1] != b[1] and frozenset((a[1], b[1])) in apart):
            out.append(imp)
    return out


def cycles(g: Graph) -> list[list[str]]:
    """Strongly connected components of size > 1 (Tarjan, iterative), each sorted."""
    edges = g.internal_edges()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    sccs: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        sccs.append(sorted(comp))
    return sorted(sccs)


def analyze(root: Path = ROOT) -> tuple[Graph, list[Import], list[list[str]]]:
    g = build(root)
    return g, layering_violations(g), cycles(g)


def _fmt(imp: Import) -> str:
    kind = "function-level" if imp.in_function else "module-level"
    return f"{imp.src} -> {imp.dst}  ({kind}, {imp.src}:{imp.line})"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    g, bad, sccs = analyze()
    n_int = sum(1 for i in g.imports if i.internal)
    n_fn = sum(1 for i in g.imports if i.internal and i.in_function)
    print(f"modules: {len(g.modules)}, internal imports: {n_int} ({n_fn} function-level)")
    print(f"layering violations (tirx.ir importing upward): {len(bad)}")
    for imp in bad:
        print(f"  {_fmt(imp)}")
    up = upward_imports(g)
    print(f"upward imports (tests/test_layering.py allowlists them): {len(up)}")
    for imp in up:
        print(f"  {_fmt(imp)}")
    lost = unlayered(g)
    print(f"modules in no layer (LAYERS): {len(lost)}")
    for m in lost:
        print(f"  {m}")
    print(f"import cycles (strongly connected components > 1): {len(sccs)}")
    for comp in sccs:
        members = set(comp)
        print(f"  [{len(comp)}] {', '.join(comp)}")
        for imp in g.imports:
            if imp.internal and imp.src in members and imp.dst in members and imp.src != imp.dst:
                print(f"      {_fmt(imp)}")
    if "--edges" in argv:
        for imp in g.imports:
            if imp.internal:
                print(_fmt(imp))
    return 1 if bad or sccs or lost else 0


if __name__ == "__main__":
    sys.exit(main())
