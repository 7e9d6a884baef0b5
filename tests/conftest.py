"""Shared fixtures: real SQLite files, a real throwaway PostgreSQL server, the shared public data.

Under CI=true a missing component (PostgreSQL, the shared data) fails the run instead of skipping.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from sqlalchemy import Engine

from annotator.database.engine import get_engine
from annotator.settings import environment
from tests.support.postgres import create_database, drop_database, postgres_server

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
def engine(database_url: str) -> Engine:
    return get_engine(database_url)


@pytest.fixture
def sqlite_engine(sqlite_url: str) -> Engine:
    return get_engine(sqlite_url)


@pytest.fixture
def aime(engine: Engine, shared_data: Path) -> Engine:
    """The ReliableMath release's AIME problems and candidates, imported."""
    from annotator.import_export.formats import read  # here: most tests never import anything
    from annotator.import_export.importer import import_parts

    release = shared_data / "reliablemath"
    import_parts([*read(release / "solve" / "aime.json"), *read(release / "unsol" / "aime.json")], engine=engine)
    return engine
