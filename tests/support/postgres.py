"""A throwaway PostgreSQL server from the local binaries (design.md section 6), for tests and benchmarks."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.ports import ATTEMPTS, PORT_TAKEN, candidate_port

PG_BIN_DIRS = ("/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/bin")


def find_binary(name: str) -> str | None:
    # ANNOTATOR_PG_BINDIR pins the one directory to look in (the tests of the CI rules point it nowhere).
    pinned = os.environ.get("ANNOTATOR_PG_BINDIR")
    for directory in (pinned,) if pinned else PG_BIN_DIRS:
        candidate = Path(directory) / name
        if candidate.exists():
            return str(candidate)
    return None if pinned else shutil.which(name)


def _as_postgres(args: list[str]) -> list[str]:
    # initdb refuses to run as root; run the server as the postgres user when we are root.
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start PostgreSQL on 127.0.0.1 and a free port with fsync off; yield a SQLAlchemy URL; stop it after."""
    initdb, pg_ctl = find_binary("initdb"), find_binary("pg_ctl")
    if not initdb or not pg_ctl:
        raise FileNotFoundError("PostgreSQL binaries initdb/pg_ctl not found (apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="annotator-pg-"))
    data, socket_dir = root / "data", root / "sock"
    socket_dir.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
        shutil.chown(socket_dir, "postgres", "postgres")
    subprocess.run(
        _as_postgres([initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"]),
        check=True,
        capture_output=True,
        cwd=root,
    )
    port = _start(pg_ctl, data, socket_dir, root)
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_postgres([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]), capture_output=True, cwd=root
        )
        shutil.rmtree(root, ignore_errors=True)


def _start(pg_ctl: str, data: Path, socket_dir: Path, root: Path) -> int:
    """Start the server on a free port and return it; a port another process took first is tried again."""
    log = root / "log"
    for _ in range(ATTEMPTS):
        port = candidate_port()
        options = f"-c listen_addresses=127.0.0.1 -c port={port} -c fsync=off -c unix_socket_directories={socket_dir}"
        started = subprocess.run(
            _as_postgres([pg_ctl, "-D", str(data), "-o", options, "-l", str(log), "-w", "-t", "60", "start"]),
            capture_output=True,
            cwd=root,
        )
        if started.returncode == 0:
            return port
        said = log.read_text(errors="replace") if log.exists() else ""
        if not PORT_TAKEN.search(said):
            output = started.stderr + said.encode()
            raise subprocess.CalledProcessError(started.returncode, started.args, started.stdout, output)
        log.unlink()
    raise OSError(f"PostgreSQL found its port taken {ATTEMPTS} times")


def create_database(server_url: str, name: str, *, template: str | None = None) -> str:
    """A fresh database on the server (a copy of database `template`, which no one may be connected to); returns its
    URL."""
    import psycopg

    plain = server_url.replace("postgresql+psycopg://", "postgresql://")
    copy = f' TEMPLATE "{template}"' if template else ""
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"{copy}')
    return server_url.rsplit("/", 1)[0] + f"/{name}"


def drop_database(server_url: str, name: str) -> None:
    import psycopg

    plain = server_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
