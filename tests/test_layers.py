"""The package's layers, read from its own imports: every import runs down the layers, and no module
imports itself back through others.

Each import counts — at the top of a module or inside a function (a lazy import hides a tie from a
reader, not from this test) — except those under ``if TYPE_CHECKING:``, which never run. ``from
package import module`` is an edge to that module, and to the ``__init__`` of each package around it
that the importer is not inside, which Python runs first (``reconcile`` itself aside: the root holds
only the version and two lazy conveniences for ``reconcile.connect``).
docs/architecture.md describes the same layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "reconcile"

# Bottom to top. A module belongs to the first layer one of whose names is its name or a parent of it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("reconcile.version", "reconcile.errors", "reconcile.sql_text", "reconcile.engine", "reconcile.money", "reconcile.when",
              "reconcile.display", "reconcile.redact", "reconcile.resources", "reconcile.durability", "reconcile.notices",
              "reconcile.outputs", "reconcile.sheets")),
    ("store", ("reconcile.store",)),
    ("prices", ("reconcile.prices",)),
    ("ingest", ("reconcile.formats", "reconcile.ingest")),
    ("config", ("reconcile.config",)),
    ("engines", ("reconcile.engines",)),
    ("analyses", ("reconcile.analyses",)),
    ("checks", ("reconcile.checks",)),
    ("reports", ("reconcile.reports",)),
    ("workflow", ("reconcile.morning", "reconcile.watch")),
    ("interfaces", ("reconcile.api", "reconcile.journal", "reconcile.testing", "reconcile.cli",
                    "reconcile.docs_gen", "reconcile.format_docs", "reconcile.cli_doc", "reconcile")),
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _type_checking_only(tree: ast.AST) -> set[int]:
    """Line numbers inside ``if TYPE_CHECKING:`` blocks."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _imports(name: str, path: Path) -> set[str]:
    """The package's modules ``name`` imports, wherever in the module the import stands."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in MODULES)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            submodules = {f"{module}.{alias.name}" for alias in node.names} & MODULES.keys()
            names_only = len(submodules) < len(node.names)
            found.update(submodules)
            if names_only and module in MODULES:
                found.add(module)
    # importing a module of another package runs that package's __init__ first: an edge to it too (a
    # package's own __init__, already running when it imports its modules, is no edge)
    for target in list(found):
        parts = target.split(".")
        found.update(package for package in (".".join(parts[:n]) for n in range(2, len(parts)))
                     if not (name == package or name.startswith(package + ".")))
    found.discard(name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def layer_of(module: str) -> int:
    for number, (_, names) in enumerate(LAYERS):
        if any(module == n or module.startswith(n + ".") for n in names if n != "reconcile"):
            return number
    if module == "reconcile":
        return len(LAYERS) - 1
    raise AssertionError(f"{module} is in no layer: add it to LAYERS (and to docs/architecture.md)")


def test_every_module_has_a_layer():
    assert len(MODULES) > 80  # the walk found the package
    for module in MODULES:
        layer_of(module)


def test_imports_run_down_the_layers():
    upward = sorted(f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
                    for a, targets in GRAPH.items() for b in targets if layer_of(b) > layer_of(a))
    assert not upward, "imports that run up the layers:\n" + "\n".join(upward)


def test_no_module_imports_itself_back():
    """Tarjan's strongly connected components: a component of two or more modules is an import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("planted", ["up", "cycle"])
def test_the_graph_sees_what_it_judges(planted, tmp_path):
    """The reader finds a lazy import inside a function and a relative one (the test can fail)."""
    source = ("def f():\n    from reconcile.cli import app\n" if planted == "up"
              else "from ..analyses import costs\n")
    path = tmp_path / "probe.py"
    path.write_text(source)
    found = _imports("reconcile.store.probe", path)
    assert found == ({"reconcile.cli"} if planted == "up" else {"reconcile.analyses.costs", "reconcile.analyses"})
    assert max(layer_of(m) for m in found) > layer_of("reconcile.store.probe")


def test_the_architecture_page_names_every_layer_and_every_top_level_module():
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for layer, _ in LAYERS:
        assert f"| {layer} |" in page, f"docs/architecture.md has no row for the {layer} layer"
    for entry in sorted(PACKAGE.iterdir()):
        if entry.is_dir() and (entry / "__init__.py").exists():
            assert f"`{entry.name}/" in page, f"docs/architecture.md does not place reconcile/{entry.name}/"
        elif entry.suffix == ".py" and entry.name != "__init__.py":
            assert f"`{entry.name}`" in page, f"docs/architecture.md does not place reconcile/{entry.name}"
