"""The package's shape: imports point down the layers of docs/architecture.md, no import cycles,
only the four entry modules at the root, and file names unique outside tasks/ and commands/."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "longbench100"
ROOT_MODULES = {"__init__.py", "__main__.py", "api.py", "cli.py"}
SHARED_NAMES = {"__init__.py", "run.py", "options.py"}


def layer_ranks() -> dict[str, int]:
    """Each top-level package's layer number, read from docs/architecture.md's numbered list."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("<!-- layers:", 1)[1]
    ranks: dict[str, int] = {}
    for line in block.splitlines()[1:]:
        match = re.match(r"(\d+)\. (.*)", line)
        if not match:
            if ranks:
                break
            continue
        for name in re.findall(r"`([^`]+)`", match.group(2)):
            ranks[name] = int(match.group(1))
    return ranks


def module_name(path: Path) -> str:
    """``longbench100.a.b`` for ``longbench100/a/b.py`` (a package for its ``__init__.py``)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imported_modules(name: str, path: Path) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its file (type-checking imports too)."""
    found: set[str] = set()
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{module}.{alias.name}"
                found.add(full if full in MODULES else module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {target for target in found if target in MODULES and target != name}


GRAPH = {name: imported_modules(name, path) for name, path in MODULES.items()}


def top_package(name: str) -> str:
    """The first folder (or root module) under ``longbench100`` that ``name`` lives in."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_the_layer_list_names_every_top_level_package() -> None:
    ranks = layer_ranks()
    tops = {top_package(name) for name in MODULES} - {"__init__"}
    assert tops <= set(ranks), (
        f"packages missing from docs/architecture.md: {sorted(tops - set(ranks))}"
    )


def uphill_edges(graph: dict[str, set[str]], ranks: dict[str, int]) -> list[str]:
    """Every import from a lower layer to a higher one, as ``importer -> imported``."""
    return sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        for target in targets
        if top_package(name) != "__init__"
        and top_package(target) != "__init__"
        and ranks[top_package(target)] > ranks[top_package(name)]
    )


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return cycles


def test_imports_point_down_the_layers() -> None:
    assert uphill_edges(GRAPH, layer_ranks()) == []


def test_no_import_cycles() -> None:
    assert import_cycles(GRAPH) == []


def test_the_checks_see_an_uphill_import_and_a_cycle() -> None:
    """A tasks module imported by a fitting module, and two modules importing each other, are found."""
    graph = {name: set(targets) for name, targets in GRAPH.items()}
    graph["longbench100.fitting.fit"].add("longbench100.tasks.base")
    graph["longbench100.core.errors"].add("longbench100.core.paths")
    graph["longbench100.core.paths"].add("longbench100.core.errors")
    assert uphill_edges(graph, layer_ranks()) == [
        "longbench100.fitting.fit -> longbench100.tasks.base"
    ]
    assert ["longbench100.core.errors", "longbench100.core.paths"] in import_cycles(graph)


def test_the_root_holds_only_the_entry_modules() -> None:
    assert {path.name for path in PACKAGE.glob("*.py")} == ROOT_MODULES


def test_file_names_are_unique_outside_tasks_and_commands() -> None:
    names = Counter(
        path.name
        for path in PACKAGE.rglob("*.py")
        if path.parent != PACKAGE
        and top_package(module_name(path)) not in {"tasks", "commands"}
        and path.name not in SHARED_NAMES
    )
    assert [name for name, count in names.items() if count > 1] == []
