"""The annotator command line as a user runs it: `run_cli` runs a command in a child process forked from the test's,
through the CLI's real entry function (`annotator.cli.main`).

A forked child starts at once, where a fresh interpreter would import the command's libraries again; it has its
own environment, arguments, standard streams (the file descriptors themselves), exit code, signal handlers and
caches, so a command can neither see nor change the test's. What only a fresh `python -m annotator` process shows
(the interpreter's start-up and imports, its output at exit) is checked in tests/cli/test_hostile.py, which runs a
sample of its commands both ways.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import io
import logging
import os
import select
import signal
import subprocess
import sys
import tempfile
import traceback
import types
import warnings
import weakref
from collections.abc import Mapping
from typing import IO

from sqlalchemy import Engine, event

from tests.conftest import PROJECT_ROOT

TIMEOUT_SECONDS = 120
_INHERITED_POOLS: list[object] = []  # in a forked child: the test's connection pools, alive until it exits
_CONNECTED: weakref.WeakSet[Engine] = weakref.WeakSet()  # every engine of this process that opened a connection
event.listen(Engine, "engine_connect", lambda connection: _CONNECTED.add(connection.engine))


def run_cli(db_url: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`python -m annotator ARGS` on database `db_url`, given `stdin` as its input (a forked child process)."""
    return run_forked(list(args), {**os.environ, "ANNOTATOR_DATABASE_URL": db_url}, stdin=stdin)


def run_forked(
    args: list[str], env: Mapping[str, str], *, stdin: str = "", timeout: float = TIMEOUT_SECONDS
) -> subprocess.CompletedProcess[str]:
    """`annotator.cli.main()` with `args` in a child forked from this process, in `env` and the project's folder, as
    `python -m annotator ARGS` runs it; its exit code and what it wrote to its stdout and stderr, as
    `subprocess.run(..., capture_output=True, text=True)` gives them."""
    from annotator.cli import main  # imported before the fork: what the children share, they do not each import

    command = [sys.executable, "-m", "annotator", *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as loaded:
        sys.stdout.flush()
        sys.stderr.flush()
        # Frozen, the test's objects are not walked by the child's collector: their memory stays shared, not copied.
        gc.freeze()
        pid = os.fork()
        if pid == 0:  # the child: never returns into the test
            code = 1
            try:
                code = _child(main, args, dict(env), stdin, out.fileno(), err.fileno(), loaded)
            finally:
                os._exit(code)
        gc.unfreeze()
        returncode = _wait(pid, timeout, command)
        out.seek(0)
        err.seek(0)
        loaded.seek(0)
        _import_here(loaded.read().decode().split())
        return subprocess.CompletedProcess(
            command, returncode, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
        )


def _wait(pid: int, timeout: float, command: list[str]) -> int:
    """The child's exit status as `Popen.returncode` gives it; killed after `timeout` seconds."""
    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise subprocess.TimeoutExpired(command, timeout)
    finally:
        os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _import_here(names: list[str]) -> None:
    """Import the project's modules a command imported as it ran, so that the next command forked finds them."""
    for name in names:
        if name not in sys.modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)


def _child(main: object, args: list[str], env: dict[str, str], stdin: str, out: int, err: int, loaded: IO[bytes]
           ) -> int:
    """In the forked child: a fresh command's process state, then the command; its exit code. The names of the
    project's modules it has loaded go to `loaded`."""
    os.dup2(out, 1)
    os.dup2(err, 2)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
                                  line_buffering=True)
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    try:
        _fresh_process(args, env)
        return _exit_code(main)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        loaded.write(" ".join(name for name in list(sys.modules) if name.partition(".")[0] == "annotator").encode())
        loaded.flush()


def _fresh_process(args: list[str], env: dict[str, str]) -> None:
    """What `python -m annotator ARGS` starts with, where the test process differs from it."""
    from annotator.database.engine import get_engine
    from annotator.settings import environment

    os.environ.clear()
    os.environ.update(env)
    os.chdir(PROJECT_ROOT)
    # click names the program from these: `python -m annotator`, as in its usage lines.
    sys.argv = [str(PROJECT_ROOT / "annotator" / "__main__.py"), *args]
    main_module = types.ModuleType("__main__")
    main_module.__package__ = "annotator"
    sys.modules["__main__"] = main_module
    # The settings and engines the test read or opened are not the command's. The engines' pooled connections are
    # the test's (SQLite's advice: a connection is not used, nor closed, across a fork): kept, never touched.
    environment.settings.cache_clear()
    for engine in list(_CONNECTED):
        _INHERITED_POOLS.append(engine.pool)
        engine.dispose(close=False)
    get_engine.cache_clear()
    # The interpreter's own warning filters (pytest's record warnings), and no logging handlers (pytest's capture
    # them): a warning or log record reaches stderr as in a fresh process.
    warnings.resetwarnings()
    for category in (ResourceWarning, ImportWarning, PendingDeprecationWarning, DeprecationWarning):
        warnings.filterwarnings("ignore", category=category)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    # No event loop: the browser tests' Playwright keeps one running in this thread, where `asyncio.run` would fail.
    asyncio.events._set_running_loop(None)  # noqa: SLF001 (asyncio's own way to say none runs here)
    asyncio.set_event_loop_policy(None)
    logging.root.handlers.clear()
    logging.root.setLevel(logging.WARNING)
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGALRM):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _exit_code(main: object) -> int:
    """Run `main` as the interpreter runs a program: `SystemExit` is the exit code, any other exception a traceback
    on stderr and 1."""
    try:
        main()  # type: ignore[operator]
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 (as the interpreter does with an uncaught exception)
        traceback.print_exc()
        return 1
    return 0
