"""No import cycle inside `annotator/`: the import graph is built from the source (every `import` statement,
at the top of a module or inside a function), and it must have no cycle.

An edge goes from a module to each module it names: `import a.b` names `a.b`; `from a.b import c` names `a.b.c`
when that is a module, else `a.b`. A package's `__init__` that a submodule import runs first is not an edge of
its own (that is how Python packages work, and no cycle can come of it alone). Imports under
`if TYPE_CHECKING:` never run and are left out. A string that is a module's full name
(`"annotator.import_export.formats.umwp"` in the list of formats, `"annotator.import_export.exports.umwp:write_files"`
in that of exports: `importlib` loads them when they are used) counts as an import of that module.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.imports import PROJECT_ROOT

CORE = PROJECT_ROOT / "annotator"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in CORE.rglob("*.py")}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: anywhere in the module, functions included, but not under
    `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def _base(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, *([node.module] if node.module else [])])


def _imports_of(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that `module` (at `path`) names in its import statements."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # A module named to be loaded: "annotator.import_export.formats.umwp", or
    # "annotator.import_export.exports.umwp:write_files".
    names = {node.value.split(":")[0] for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
            continue
        base = _base(module, node, path.name == "__init__.py")
        for alias in node.names:
            names.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {name for name in names if name in known and name != module}


def import_graph() -> dict[str, set[str]]:
    """Each module of `annotator/` with the modules of `annotator/` it imports."""
    modules = _modules()
    known = set(modules)
    return {module: _imports_of(module, path, known) for module, path in modules.items()}


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    frontier = [start]
    while frontier:
        for target in graph[frontier.pop()] - seen:
            seen.add(target)
            frontier.append(target)
    return seen


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or not (strongly connected components of more
    than one module), each sorted."""
    reach = {node: _reachable(graph, node) for node in graph}
    groups = {tuple(sorted(other for other in reach[node] if node in reach[other]))
              for node in graph if node in reach[node]}
    return sorted(list(group) for group in groups)


def _a_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One cycle through the first module of a strongly connected component, for the failure message."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for target in sorted(graph[node] & members):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                frontier.append(target)
    return component


def test_the_graph_sees_imports_inside_functions_and_modules_named_to_be_loaded() -> None:
    graph = import_graph()
    # `annotator.cli.data` imports the database layer inside its commands only.
    assert "annotator.database.engine" in graph["annotator.cli.data"]
    # The list of formats names each reader's module; `importlib` loads it when the format is used.
    assert "annotator.import_export.formats.umwp" in graph["annotator.import_export.formats.registry"]
    assert "annotator.import_export.exports.umwp" in graph["annotator.import_export.exports"]
    # `annotator.import_export.formats` re-exports from its submodules: `from annotator.import_export.formats.reading
    # import read`.
    formats = "annotator.import_export.formats"
    assert {f"{formats}.reading", f"{formats}.registry"} <= graph[formats]
    assert len(graph) > 50


def test_cycles_finds_a_cycle_through_a_function_level_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert _a_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_inside_the_core() -> None:
    graph = import_graph()
    assert [" -> ".join(_a_cycle(graph, component)) for component in cycles(graph)] == []
