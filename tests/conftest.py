"""Shared fixtures: real SQLite files, a real throwaway PostgreSQL server, the shared public data.

Under CI=true a missing component (PostgreSQL, the shared data) fails the run instead of skipping.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from sqlalchemy import Connection, Engine, event

from annotator.db import get_engine
from tests.support.postgres import create_database, drop_database, postgres_server
from tests.support.processes import wait_unreaped

IN_CI = os.environ.get("CI", "").lower() == "true"
# Property tests: no per-example deadline (this machine is shared; a slow example is not a failure) and, in
# CI, the same examples on every run.
settings.register_profile("annotator", deadline=None, derandomize=IN_CI)
settings.load_profile("annotator")
PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("ANNOTATOR_SHARED_DATA") or PROJECT_ROOT.parent / "shared" / "data")


def missing(reason: str) -> None:
    """Skip locally; fail under CI=true, where every required component must be present."""
    if IN_CI:
        pytest.fail(f"required component missing under CI=true: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "reliablemath" / "unsol.json").exists():
        missing(f"the shared public data is not at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'annotator.sqlite'}"


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    try:
        with postgres_server() as url:
            yield url
    except (FileNotFoundError, OSError) as exc:
        missing(f"cannot start PostgreSQL: {exc}")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database URL on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'annotator.sqlite'}"
        return
    server = request.getfixturevalue("postgres_url")
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield create_database(server, name)
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
    from annotator.formats import read  # here: most tests never import anything
    from annotator.importer import import_parts

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
