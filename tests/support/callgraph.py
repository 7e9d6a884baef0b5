"""Which functions write to the database, read from the source (AST), for the layout tests.

A function writes when it opens a write transaction (`write_session`, a page's `page_write`) or calls, directly
or through other functions, a function of the core that does (`load_demo(engine)`, `transfer.import_batch`).
Calls are resolved through each module's imports; a method call on an object (`session.add`) is not followed,
so only module-level functions of our own count.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.imports import PROJECT_ROOT

OPENERS = frozenset({"annotator.database.engine.write_session", "ui.writes.page_write"})


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(PROJECT_ROOT).with_suffix("").parts).removesuffix(".__init__")


def bound(alias: ast.alias) -> str:
    return alias.name if alias.asname else alias.name.split(".")[0]


def _imports(tree: ast.Module, module: str) -> dict[str, str]:
    """Local name -> dotted name it stands for."""
    names: dict[str, str] = {}
    package = module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:  # `import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`
                names[alias.asname or alias.name.split(".")[0]] = bound(alias)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
            for alias in node.names:
                names[alias.asname or alias.name] = f"{base}.{alias.name}"
    return names


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)) is not None:
        return f"{base}.{node.attr}"
    return None


def _resolve(name: str, imports: dict[str, str], module: str, local: set[str]) -> str:
    head, _, rest = name.partition(".")
    if head in imports:
        return f"{imports[head]}.{rest}".rstrip(".")
    if head in local and not rest:
        return f"{module}.{head}"
    return name


@dataclass
class Function:
    qualname: str  # module.name
    node: ast.FunctionDef | ast.AsyncFunctionDef
    calls: set[str] = field(default_factory=set)  # resolved dotted names


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    functions: dict[str, Function]  # by qualified name
    top_level_calls: set[str]  # calls made by the module's own code, outside any function


def _calls(nodes: list[ast.stmt], imports: dict[str, str], module: str, local: set[str]) -> set[str]:
    found = set()
    for statement in nodes:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and (name := _dotted(node.func)) is not None:
                found.add(_resolve(name, imports, module, local))
    return found


def parse(path: Path, *, source: str | None = None) -> Module:
    """The module at `path` (its text, or `source` in its place)."""
    name = module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    imports = _imports(tree, name)
    defs = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    local = {node.name for node in defs}
    functions = {
        f"{name}.{node.name}": Function(f"{name}.{node.name}", node, _calls(node.body, imports, name, local))
        for node in defs
    }
    outside = [node for node in tree.body if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    return Module(name, path, tree, functions, _calls(outside, imports, name, local))


def declared_capability(function: Function) -> bool:
    """Decorated `@saves(..., capability=...)` or `@writes(capability)` (`ui.writes`)."""
    for decorator in function.node.decorator_list:
        if not isinstance(decorator, ast.Call):
            continue
        name = (_dotted(decorator.func) or "").rsplit(".", 1)[-1]
        if name == "writes" and decorator.args:
            return True
        if name == "saves" and any(keyword.arg == "capability" for keyword in decorator.keywords):
            return True
    return False


def values(module: Module) -> set[str]:
    """Names the module uses as values, not calls (a callback handed to a widget: `on_click=_save`)."""
    imports = _imports(module.tree, module.name)
    local = {qualname.rsplit(".", 1)[-1] for qualname in module.functions}
    called = {id(node.func) for node in ast.walk(module.tree) if isinstance(node, ast.Call)}
    found = set()
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Load) and id(node) not in called:
            if (name := _dotted(node)) is not None:
                found.add(_resolve(name, imports, module.name, local))
    return found


def undeclared_writes(modules: list[Module], *, checked: set[str], absorbing: set[str]) -> list[str]:
    """The functions of the `checked` modules that write without a declared capability.

    A declared function (`declared_capability`), or one in `absorbing` (signing in, the writes module itself),
    covers what it calls. Any other function that writes is fine only when it is called, and only by covering
    functions: never by a module's own code, never handed over as a value (a widget's callback)."""
    functions = {qualname: function for module in modules for qualname, function in module.functions.items()}
    covering = {qualname for qualname, function in functions.items() if declared_capability(function)} | absorbing
    exposed = set(OPENERS)
    changed = True
    while changed:
        changed = False
        for qualname, function in functions.items():
            if qualname not in exposed and qualname not in covering and function.calls & exposed:
                exposed.add(qualname)
                changed = True
    at_top = set().union(*(module.top_level_calls for module in modules))
    as_values = set().union(*(values(module) for module in modules if module.name in checked))
    offenders = []
    for qualname in sorted(exposed - OPENERS):
        if qualname.rsplit(".", 1)[0] not in checked:
            continue
        callers = {name for name, function in functions.items() if qualname in function.calls}
        if not callers or not callers <= covering or qualname in at_top or qualname in as_values:
            offenders.append(qualname)
    offenders += sorted(f"{module.name} (its own code calls {name})" for module in modules if module.name in checked
                        for name in module.top_level_calls & OPENERS)
    return offenders
