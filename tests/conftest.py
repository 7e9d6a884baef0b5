"""Shared fixtures: real SQLite files, a real throwaway PostgreSQL server, the shared public data.

Under CI=true a missing component (PostgreSQL, the shared data) fails the run instead of skipping.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _pytest.nodeid import NodeId
from hypothesis import settings
from sqlalchemy import Connection, Engine, event

from annotator.database.engine import get_engine
from annotator.settings import environment
from tests.support.migrated import migrated_postgres, migrated_sqlite
from tests.support.postgres import create_database, drop_database, postgres_server
from tests.support.processes import wait_unreaped

IN_CI = os.environ.get("CI", "").lower() == "true"
# Property tests: no per-example deadline (this machine is shared; a slow example is not a failure) and, in
# CI, the same examples on every run.
settings.register_profile("annotator", deadline=None, derandomize=IN_CI)
settings.load_profile("annotator")
PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("ANNOTATOR_SHARED_DATA") or PROJECT_ROOT.parent / "shared" / "data")


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    # pyproject.toml's addopts name pytest-xdist's options; with it off (-p no:xdist) they mean nothing.
    if not pluginmanager.has_plugin("xdist"):
        group = parser.getgroup("xdist", "pytest-xdist (off)")
        group._addoption("-n", "--numprocesses", help="ignored: pytest-xdist is off")  # noqa: SLF001 (as xdist adds it)
        group.addoption("--dist", default="no", help="ignored: pytest-xdist is off")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> Iterator[None]:
    """Tests that share a costly server run in one test process (pytest-xdist's `--dist loadgroup`): those of the
    real model, and those of a module whose own module-scoped fixture they use (once per module, not per worker)."""
    for item in items:
        if group := _shared_server_group(item):
            item.add_marker(pytest.mark.xdist_group(group))
    yield
    # pytest-xdist 3.8 tells its scheduler an item's group by appending `@group` to `item._nodeid`, which pytest 9.2
    # no longer reads (its node id is `item._id`): put the group where the scheduler sees it.
    for item in items:
        legacy = getattr(item, "_nodeid", None)
        if isinstance(legacy, str) and legacy != item.nodeid and hasattr(item, "_id"):
            item._id = NodeId.parse(legacy)  # noqa: SLF001


def _shared_server_group(item: pytest.Item) -> str | None:
    if "llama_server" in getattr(item, "fixturenames", ()):
        return "llama"
    module = item.getparent(pytest.Module)
    info = getattr(item, "_fixtureinfo", None)
    if module is None or info is None:
        return None
    for definitions in info.name2fixturedefs.values():
        if any(d.scope == "module" and d.baseid == module.nodeid for d in definitions):
            return module.nodeid
    return None


def missing(reason: str) -> None:
    """Skip locally; fail under CI=true, where every required component must be present."""
    if IN_CI:
        pytest.fail(f"required component missing under CI=true: {reason}")
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def _settings_read_afresh() -> Iterator[None]:
    """Each test reads the `ANNOTATOR_*` settings from its own environment, as a command or the app does as it
    starts."""
    environment.settings.cache_clear()
    yield
    environment.settings.cache_clear()


@pytest.fixture
def set_environment(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """`set_environment(ANNOTATOR_X="...")`: set variables for this test, then read the settings again."""

    def set_variables(**values: str) -> None:
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        environment.settings.cache_clear()

    return set_variables


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "reliablemath" / "unsol.json").exists():
        missing(f"the shared public data is not at {SHARED_DATA}")
    return SHARED_DATA


def _uses(request: pytest.FixtureRequest, engine: str) -> bool:
    """Whether the test uses the `engine` fixture named, which upgrades its database as it is set up."""
    return engine in request.fixturenames


@pytest.fixture
def sqlite_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh SQLite file's URL: no file yet, or a migrated copy when the test uses `sqlite_engine`."""
    path = tmp_path / "annotator.sqlite"
    return migrated_sqlite(path) if _uses(request, "sqlite_engine") else f"sqlite:///{path}"


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    try:
        with postgres_server() as url:
            yield url
    except (FileNotFoundError, OSError) as exc:
        missing(f"cannot start PostgreSQL: {exc}")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database URL on each backend: an empty database, or, when the test uses `engine` (which would
    migrate it at once), a copy of one migrated to the newest revision."""
    migrated = _uses(request, "engine")
    if request.param == "sqlite":
        path = tmp_path / "annotator.sqlite"
        yield migrated_sqlite(path) if migrated else f"sqlite:///{path}"
        return
    server = request.getfixturevalue("postgres_url")
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield migrated_postgres(server, name) if migrated else create_database(server, name)
    # Each test's engine keeps a pooled connection to its own database; FORCE ends it with the database.
    drop_database(server, name)


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    made = get_engine(database_url)
    yield made
    made.dispose()


@pytest.fixture
def sqlite_engine(sqlite_url: str) -> Iterator[Engine]:
    made = get_engine(sqlite_url)
    yield made
    made.dispose()


@pytest.fixture(autouse=True)
def _close_idle_connections() -> Iterator[None]:
    """Dispose every engine a test used (most tests make their own, and an engine not disposed keeps its database
    files or server connections open for the rest of the run). An engine shared beyond the test stays usable: it
    opens new connections when next used."""
    engines: weakref.WeakSet[Engine] = weakref.WeakSet()

    def connected(connection: Connection) -> None:
        engines.add(connection.engine)

    event.listen(Engine, "engine_connect", connected)
    yield
    event.remove(Engine, "engine_connect", connected)
    for used in list(engines):
        used.dispose()


@pytest.fixture
def aime(engine: Engine, shared_data: Path) -> Engine:
    """The ReliableMath release's AIME problems and candidates, imported."""
    from annotator.import_export.formats import read  # here: most tests never import anything
    from annotator.import_export.importer import import_parts

    release = shared_data / "reliablemath"
    import_parts([*read(release / "solve" / "aime.json"), *read(release / "unsol" / "aime.json")], engine=engine)
    return engine


@pytest.fixture
def exited_pid() -> Iterator[int]:
    """The pid of a child process that has exited, kept unreaped (a zombie) until the test ends: the kernel gives a
    reaped pid to the next process that starts, possibly at once, but a zombie's to none."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    wait_unreaped(process)
    yield process.pid
    process.wait()


@pytest.fixture(scope="session")
def llama_server_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """SmolLM2 under `llama_cpp.server`, once per test process (tests/support/llama_server.py)."""
    from tests.support.llama_server import serving  # here: it imports this module

    with serving(tmp_path_factory.mktemp("llama") / "server.log") as url:
        yield url
