"""The house rules of ARCHITECTURE.md, checked: layers import downwards, core modules stay small, the command
line starts at once."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from annotator.database.vocabulary import Role
from tests.support import callgraph
from tests.support.imports import PROJECT_ROOT, modules_loaded_by

CORE = PROJECT_ROOT / "annotator"
MAX_CORE_MODULE_LINES = 450


def _imported_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_the_core_never_imports_streamlit_typer_ui_or_pages() -> None:
    offenders = {}
    for path in CORE.rglob("*.py"):
        if "cli" in path.relative_to(CORE).parts:
            continue  # the command line is a user interface of its own, like app_pages/
        bad = {n for n in _imported_names(path) if n.split(".")[0] in ("streamlit", "typer", "ui", "app_pages")}
        if bad:
            offenders[str(path.relative_to(PROJECT_ROOT))] = sorted(bad)
    assert not offenders


def _reaches_into_private(package: str, name: str) -> bool:
    """Whether code in `package` importing `name` reaches into a private module or package it is not inside: a
    private name (`annotator._util`, `annotator.import_export._problems`) belongs to its parent package and everything
    under that package."""
    parts = name.split(".")
    private = [i for i, part in enumerate(parts) if part.startswith("_") and part != "__future__"]
    if not private:
        return False
    owner = ".".join(parts[: private[0]])
    return package != owner and not package.startswith(owner + ".")


def test_no_module_imports_another_packages_private_module() -> None:
    offenders = []
    for path in [*CORE.rglob("*.py"), *(PROJECT_ROOT / "app_pages").glob("*.py"), *(PROJECT_ROOT / "ui").glob("*.py")]:
        package = ".".join(path.relative_to(PROJECT_ROOT).parent.parts)
        offenders += [f"{path.relative_to(PROJECT_ROOT)} imports {name}"
                      for name in _imported_names(path) if _reaches_into_private(package, name)]
    assert not offenders


def test_the_private_rule_tells_inside_from_outside() -> None:
    assert not _reaches_into_private("annotator.import_export", "annotator.import_export._problems")
    assert not _reaches_into_private("annotator.import_export.formats", "annotator._util.bitset")
    assert _reaches_into_private("annotator.labelling", "annotator.import_export._problems")
    assert _reaches_into_private("ui", "annotator._util.files")
    assert _reaches_into_private("annotator.cli", "annotator.import_export.formats._io")


# The core's packages in layers: a package imports its own layer and those below, never one above. The domain
# packages share a layer: they use each other (an import writes labels, a report reads the queue's settings).
PACKAGE_LAYERS = (
    {"_util", "settings"},
    {"database"},
    {"accounts"},
    {"labelling", "import_export", "figures", "construction", "transcripts", "runs"},
    {"cli"},
)


def _layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "annotator" or len(parts) < 2:
        return None
    return next((i for i, layer in enumerate(PACKAGE_LAYERS) if parts[1] in layer), None)


def _imports_upwards(module: str, imported: set[str]) -> list[str]:
    own = _layer_of(module)
    return sorted(name for name in imported
                  if own is not None and (layer := _layer_of(name)) is not None and layer > own)


def test_every_core_package_has_a_layer() -> None:
    packages = {path.name for path in CORE.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    assert packages == set().union(*PACKAGE_LAYERS)


def test_no_core_package_imports_a_layer_above_its_own() -> None:
    offenders = {}
    for path in CORE.rglob("*.py"):
        module = ".".join(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
        if upwards := _imports_upwards(module, _imported_names(path)):
            offenders[module] = upwards
    assert offenders == {}


def test_the_layer_rule_finds_an_import_upwards() -> None:
    assert _imports_upwards("annotator.database.queries", {"annotator.labelling.queue", "annotator._util.files"}) == [
        "annotator.labelling.queue"]
    assert _imports_upwards("annotator.accounts.auth", {"annotator.cli._app"}) == ["annotator.cli._app"]
    assert _imports_upwards("annotator.labelling.queue", {"annotator.import_export.records", "sqlalchemy"}) == []


def test_no_core_module_is_over_450_lines() -> None:
    sizes = {
        str(p.relative_to(PROJECT_ROOT)): len(p.read_text(encoding="utf-8").splitlines())
        for p in CORE.rglob("*.py")
    }
    assert {name: n for name, n in sizes.items() if n > MAX_CORE_MODULE_LINES} == {}


def test_the_command_line_loads_no_heavy_library_to_show_its_help() -> None:
    heavy = ("openai", "pandas", "pyarrow", "sqlalchemy", "sqlmodel", "alembic", "statsmodels", "sklearn")
    assert modules_loaded_by("import annotator.cli", *heavy) == []
    result = subprocess.run([sys.executable, "-m", "annotator", "--help"], cwd=PROJECT_ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0 and "agreement" in result.stdout and "generate" in result.stdout


def test_pages_write_only_through_page_write() -> None:
    """A page's write checks the account and waits briefly for a lock (`ui.writes.page_write`); only signing in
    (no account to check yet) writes with a bare `write_session`."""
    signing_in = {PROJECT_ROOT / "app.py", PROJECT_ROOT / "ui" / "sign_in.py", PROJECT_ROOT / "ui" / "writes.py"}
    offenders = [
        path.relative_to(PROJECT_ROOT).as_posix()
        for path in [*(PROJECT_ROOT / "app_pages").glob("*.py"), *(PROJECT_ROOT / "ui").glob("*.py")]
        if path not in signing_in and "write_session" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


UI_FILES = [PROJECT_ROOT / "app.py", *sorted((PROJECT_ROOT / "app_pages").glob("*.py")),
            *sorted((PROJECT_ROOT / "ui").glob("*.py"))]


def _ui_and_core() -> tuple[list[callgraph.Module], set[str]]:
    ui = [callgraph.parse(path) for path in UI_FILES]
    core = [callgraph.parse(path) for path in CORE.rglob("*.py") if "cli" not in path.relative_to(CORE).parts]
    return ui + core, {module.name for module in ui}


def _undeclared_writes(modules: list[callgraph.Module], checked: set[str]) -> list[str]:
    # Signing in (the forms, ui.sign_in, the cookie's one-time code in ui.session_cookie) writes before anyone has a
    # capability; ui.writes is the declaring itself.
    exempt = {"ui.sign_in", "ui.session_cookie", "ui.writes"}
    absorbing = {"app._first_admin_form", "app._sign_in_form"} | {
        qualname for module in modules if module.name in exempt for qualname in module.functions
    }
    return callgraph.undeclared_writes(modules, checked=checked - exempt, absorbing=absorbing)


def test_every_callback_that_writes_declares_its_capability() -> None:
    """A page callback that writes (a `page_write`, or a core function that opens a write transaction, such as
    `load_demo`) is decorated `@saves(..., capability=...)` or `@writes(capability)`, or is called only from
    such callbacks. Signing in writes without a capability: nobody is signed in yet."""
    modules, checked = _ui_and_core()
    assert _undeclared_writes(modules, checked) == []


def test_the_write_finder_finds_an_undeclared_callback() -> None:
    """The check above is not vacuous: a page callback that writes without a declaration is found, whether it
    writes through `page_write` or through a core function that opens its own transaction."""
    page = PROJECT_ROOT / "app_pages" / "annotate.py"
    source = page.read_text(encoding="utf-8")
    bare = source.replace('@saves(state, "filter change", capability=Capability.annotate)\n', "")
    demo = source.replace("from annotator.labelling import browser_queue, queue\n",
                          "from annotator.labelling import browser_queue, queue\n"
                          "from annotator.construction.demo import load_demo\n")
    demo += "\n\ndef _demo() -> None:\n    load_demo(engine)\n\n\nst.button('demo', on_click=_demo)\n"
    modules, checked = _ui_and_core()
    for changed, expected in ((bare, "app_pages.annotate._filters_changed"), (demo, "app_pages.annotate._demo")):
        assert changed != source
        swapped = [callgraph.parse(page, source=changed) if m.name == "app_pages.annotate" else m for m in modules]
        assert _undeclared_writes(swapped, checked) == [expected]


ROLE_NAMES = {role.value for role in Role}
# Where "role" is not a person's: a GSM-IC distractor sentence's role (in-topic, off-topic).
OTHER_ROLES = {CORE / "construction" / "gsm_ic.py"}


def _role_checks(path: Path) -> list[str]:
    """Where `path` writes a set of roles (`(Role.reviewer, Role.admin)`, `("reviewer", "admin")`, `tuple(Role)`),
    hands roles to a check (`guard.require(Role.admin)`) or compares a role (`user.role == Role.admin`, `row.role in
    roles`). Naming a role as a value (`create_user(role=Role.admin)`) is not a check."""

    def is_role(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Role":
            return True
        return isinstance(node, ast.Constant) and node.value in ROLE_NAMES

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        literal = isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts and all(map(is_role, node.elts))
        collected = isinstance(node, ast.Call) and (
            any(is_role(arg) and not isinstance(arg, ast.Constant) for arg in node.args)
            or (isinstance(node.func, ast.Name) and node.func.id in ("tuple", "list", "set", "frozenset")
                and any(isinstance(arg, ast.Name) and arg.id == "Role" for arg in node.args))
        )
        person = path not in OTHER_ROLES
        compared = isinstance(node, ast.Compare) and any(
            is_role(operand) or (person and isinstance(operand, ast.Attribute) and operand.attr == "role")
            for operand in [node.left, *node.comparators]
        )
        if literal or collected or compared:
            found.append(f"{path.relative_to(PROJECT_ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_role_set_or_role_check_outside_the_policies() -> None:
    """What a role may do is written once, in `annotator/accounts/policies.py`; everything else asks for a
    capability."""
    paths = [*UI_FILES, *(path for path in CORE.rglob("*.py") if path != CORE / "accounts" / "policies.py")]
    assert [hit for path in paths for hit in _role_checks(path)] == []


def _test_modules_imported(names: set[str]) -> list[str]:
    return sorted(name for name in names if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_"))


def test_no_test_module_imports_another_test_module() -> None:
    """Shared helpers live in tests/support: a test module that imports another couples their fixtures and runs."""
    offenders = {
        str(path.relative_to(PROJECT_ROOT)): found for path in (PROJECT_ROOT / "tests").rglob("*.py")
        if (found := _test_modules_imported(_imported_names(path)))
    }
    assert offenders == {}


def test_the_test_import_rule_finds_an_import_of_a_test_module() -> None:
    assert _test_modules_imported({"tests.labelling.test_queue", "tests.support.cli", "tests.conftest"}) == [
        "tests.labelling.test_queue"]
