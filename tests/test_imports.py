"""Imports run one way: no cycle among mamab's modules, function-level imports included.

Every ``import`` and ``from ... import`` in every module is read with ``ast`` (at any depth:
module level, inside functions and classes), except those under ``if TYPE_CHECKING:``, which
never run. An edge goes to the module named (``from mamab.a import b``: to ``mamab.a.b`` when
that is a module, else to ``mamab.a``); a package's ``__init__`` re-exporting its submodules is
not an edge back from them. The graph of these edges must have no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mamab

SRC = Path(mamab.__file__).parent


def module_name(path: Path) -> str:
    parts = ["mamab", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, here: str, is_package: bool, known: set[str]) -> set[str]:
    """The mamab modules ``tree`` imports (every depth, TYPE_CHECKING blocks excluded)."""
    found: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = here if is_package else here.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            for alias in node.names:  # `from mamab.x import y`: the module y, else mamab.x
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
        stack.extend(ast.iter_child_nodes(node))
    return {name for name in found if name in known and name != here}


def import_graph() -> dict[str, set[str]]:
    paths = sorted(SRC.rglob("*.py"))
    known = {module_name(p) for p in paths}
    return {
        module_name(p): _imports(
            ast.parse(p.read_text(encoding="utf-8")), module_name(p), p.name == "__init__.py", known
        )
        for p in paths
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_walker_sees_function_level_imports_and_skips_type_checking():
    code = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from mamab.b import X\n"
        "def f():\n    from mamab.c import y\n"
        "import mamab.d.e\n"
    )
    known = {"mamab", "mamab.a", "mamab.b", "mamab.c", "mamab.d", "mamab.d.e"}
    assert _imports(ast.parse(code), "mamab.a", False, known) == {"mamab.c", "mamab.d.e"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


#: mamab's layers, lowest first: a module may import from its own layer and those below, never
#: from above (first matching pattern wins; ``*`` is one algorithm family).
LAYERS = (
    (
        "mamab.errors",
        "mamab.suggest",
        "mamab.seeding",
        "mamab.timegrid",
        "mamab.stats",
        "mamab.tomlfile",
        "mamab.processes",
        "mamab.bits",
        "mamab.schedule",
        "mamab.theory",
        "mamab.diameter",
        "mamab.fingerprint",
        "mamab.kernel_cache",
        "mamab.progress",
        "mamab.algorithms.plugin_digest",
        "mamab.algorithms.spec",
        "mamab.algorithms.lcc.variants",
        "mamab.engine.ucb_kernels",
        "mamab.engine.lanes",
        "mamab.engine.vector_rows",
        "mamab.engine.aligned",
    ),
    ("mamab.topology", "mamab.problem", "mamab.faults", "mamab.engine.kernel_api"),
    (
        "mamab.algorithms",
        "mamab.algorithms.params",
        "mamab.algorithms.base",
        "mamab.algorithms.ucb_index",
        "mamab.algorithms.registry",
    ),
    (
        "mamab.algorithms.*",
        "mamab.algorithms.*.schedule",
        "mamab.algorithms.*.agent",
        "mamab.algorithms.*.spec",
    ),
    ("mamab.attacks", "mamab.engine.attack_kernel", "mamab.algorithms.*.kernel"),
    ("mamab.config",),
    ("mamab.instance", "mamab.columns", "mamab.storage", "mamab.outdir"),
    ("mamab.result", "mamab.versions"),
    ("mamab.engine", "mamab.engine.recording", "mamab.algorithms.*.driver"),
    ("mamab.engine.fast", "mamab.engine.reference", "mamab.resources"),
    ("mamab.simulate", "mamab.engine.warmup", "mamab.agents", "mamab.wire", "mamab.testing"),
    (
        "mamab.experiments.*",
        "mamab.figure_text",
        "mamab.minor_ticks",
        "mamab.plots",
        "mamab.experiments",
        "mamab.cli_types",
        "mamab.cli_params",
    ),
    ("mamab.options", "mamab.live.*", "mamab.live"),
    ("mamab.cli", "mamab.__main__", "mamab"),
)


def layer_of(module: str) -> int:
    for rank, patterns in enumerate(LAYERS):
        for pattern in patterns:
            head, star, tail = pattern.partition("*")
            if module == pattern or (
                star
                and module.startswith(head)
                and module.endswith(tail)
                and "." not in module[len(head) : len(module) - len(tail)]
            ):
                return rank
    raise AssertionError(f"{module} is in no layer of tests/test_imports.py")


def test_imports_point_down_the_layers():
    graph = import_graph()
    upward = sorted(
        f"{module} ({layer_of(module)}) imports {target} ({layer_of(target)})"
        for module, targets in graph.items()
        for target in targets
        if layer_of(target) > layer_of(module) and target != "mamab"
    )
    assert not upward, "imports pointing up:\n" + "\n".join(upward)


def test_wire_imports_no_algorithm_family():
    """The wire format's bit sizes live in ``mamab.bits``, not in an algorithm's agent module
    (issue 19): wire.py reaches the algorithms only through the registry."""
    families = sorted(
        target
        for target in import_graph()["mamab.wire"]
        if target.startswith("mamab.algorithms.") and target.count(".") >= 3
    )
    assert families == []
