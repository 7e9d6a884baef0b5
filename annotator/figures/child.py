"""Slow figures computed in a child process of the app server (`Snapshot(..., process=...)`): the seconds of work
and the memory of millions of labels stay out of the server that answers every keypress.

The server runs `python -m annotator.figures.child MODULE:NAME HOLDER` with the database's URL in the environment
(never on the command line); the child computes the `Figures` named and stores them under the lease the server
took and renews for it (`snapshot_rows`), at a lower CPU priority than the server. A child that fails says why in
its last line of output; one that dies says nothing, and the server words its exit code. Either way the stored
figures stay.
"""

from __future__ import annotations

import importlib
import logging
import os
import subprocess
import sys
import time

from sqlalchemy import Engine

from annotator.database.engine import open_engine, read_session, write_session
from annotator.database.models import utcnow
from annotator.figures.pages import Figures
from annotator.figures.snapshot_rows import store, version_text

URL_VARIABLE = "ANNOTATOR_FIGURES_DATABASE_URL"
FAILED = "figures failed: "  # the child's last line when its computation raised
# Below the server in the CPU's queue: on a busy machine the server's keypresses go first.
CHILD_NICENESS = 10
_log = logging.getLogger(__name__)


class ChildFailed(RuntimeError):
    """The child process did not store the figures; the message says why in the users' words."""


def compute_and_store(engine: Engine, figures: Figures, *, holder: str) -> None:
    """Compute `figures` from the data as it is now and store them under `holder`'s lease."""
    started, clock = utcnow(), time.monotonic()
    with read_session(engine) as session:
        # The fingerprint before the figures: a change made while they are computed makes them stale again.
        version = version_text(figures.version(session))
    with read_session(engine) as session:
        value = figures.compute(session)
    text = figures.to_json(value)
    with write_session(engine) as session:
        store(session, key=figures.key, holder=holder, version=version, value=text, started=started,
              seconds=time.monotonic() - clock)


def run(engine: Engine, process: str, *, holder: str) -> None:
    """Compute and store the figures `process` names ("module:NAME") in a child process; wait for it.

    Raises:
        ChildFailed: the child did not store them (its computation raised, or it died).
    """
    environment = {**os.environ, URL_VARIABLE: engine.url.render_as_string(hide_password=False)}
    done = subprocess.run([sys.executable, "-m", "annotator.figures.child", process, holder], env=environment,
                          stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode == 0:
        return
    said = [line for line in done.stdout.splitlines() if line.startswith(FAILED)]
    if said:
        raise ChildFailed(f"the figures' computation raised {said[-1][len(FAILED):]}")
    how = f"signal {-done.returncode}" if done.returncode < 0 else f"exit code {done.returncode}"
    raise ChildFailed(f"the process computing the figures stopped ({how})")


def figures_named(process: str) -> Figures:
    """The `Figures` that "module:NAME" names."""
    module, _, name = process.partition(":")
    figures = getattr(importlib.import_module(module), name)
    if not isinstance(figures, Figures):
        raise TypeError(f"{process} is not a Figures")
    return figures


def main(argv: list[str]) -> int:
    process, holder = argv
    os.nice(CHILD_NICENESS)
    logging.basicConfig(level=logging.WARNING)
    try:
        compute_and_store(open_engine(os.environ[URL_VARIABLE]), figures_named(process), holder=holder)
    except Exception as exc:  # noqa: BLE001  (the server records the failure; the traceback goes to its log)
        _log.exception("computing the %s figures failed", process)
        print(f"{FAILED}{type(exc).__name__}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
