"""How long a label import holds SQLite's write lock, and how long an annotator's label waits meanwhile.

    python bench/bench_import_lock.py [--labels 300000] [--repeat 3] [--code DIR]

Set-up (untimed, once): the bench_label_import sheet's rows without labels are imported, so every label of the
timed import lands on an existing candidate; each repeat starts from a copy of that database. Timed, in a
subprocess: `import_parts(read(sheet, annotator=alice))`, the code path of `python -m annotator import
sheet.json --annotator alice`. Measured there: the whole import, and the time from its `BEGIN IMMEDIATE` to its
`COMMIT` (engine events: the write lock is held exactly that long). Meanwhile, in this process, an annotator's
label is recorded once a second through what the Annotate page uses (`ui.writes.page_write` + `queue.decide`):
how long each press waited, and whether it was saved or refused as busy.

`--code DIR` runs the import with the code of another checkout (e.g. `git archive` of an older commit), for an
A/B on the same machine; the presses then go through that code's page write (`write_session`, 30 s busy timeout)
if it has no `ui/writes.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def setup(path: Path, db: Path) -> None:
    """The candidates without labels, and the annotator who labels during the import."""
    from annotator.accounts import auth
    from annotator.database.engine import get_engine, write_session
    from annotator.import_export.formats import read
    from annotator.import_export.importer import import_parts

    engine = get_engine(f"sqlite:///{db}")
    import_parts(read(path), engine=engine)
    with write_session(engine) as session:
        auth.create_user(session, name="bob", role="annotator", password="a long bench password")


def child(path: Path, db: Path) -> None:
    from sqlalchemy import event

    from annotator.database.engine import get_engine
    from annotator.import_export.formats import ReadOptions, read
    from annotator.import_export.importer import import_parts

    engine = get_engine(f"sqlite:///{db}")
    marks: dict[str, float] = {}

    @event.listens_for(engine, "begin")
    def _begin(conn) -> None:  # type: ignore[no-untyped-def]
        if conn.get_execution_options().get("sqlite_begin") == "IMMEDIATE":
            marks.setdefault("locked", time.perf_counter())

    @event.listens_for(engine, "commit")
    def _commit(conn) -> None:  # type: ignore[no-untyped-def]
        if "locked" in marks:
            marks["released"] = time.perf_counter()

    print(json.dumps({"event": "start"}), flush=True)
    start = time.perf_counter()
    summary = import_parts(read(path, options=ReadOptions(annotator="alice")), engine=engine)
    end = time.perf_counter()
    print(json.dumps({"event": "done", "seconds": end - start, "lock_seconds": marks["released"] - marks["locked"],
                      "labels_added": summary.labels_added}), flush=True)


@contextmanager
def _page_write(engine: Any, user: Any, code: Path) -> Iterator[Any]:
    if not (code / "ui" / "writes.py").exists():  # code from before ui.writes: the page wrote through write_session
        from annotator.database.engine import write_session

        with write_session(engine) as session:
            yield session
        return
    from ui import writes

    if not hasattr(writes, "declaring"):  # code from before capabilities: no declaration to make
        with writes.page_write(engine, user=user) as session:
            yield session
        return
    from annotator.accounts.policies import Capability

    with writes.declaring(Capability.annotate), writes.page_write(engine, user=user) as session:
        yield session


def _one(labelled: Path, db: Path, code: Path) -> dict[str, Any]:
    from sqlalchemy import create_engine

    from annotator.accounts import auth
    from annotator.database.engine import _setup_sqlite, read_session
    from annotator.labelling import queue

    # Not `get_engine`: it would upgrade the schema to this checkout's, which `--code`'s may not know.
    engine = create_engine(f"sqlite:///{db}", connect_args={"check_same_thread": False})
    _setup_sqlite(engine)
    with read_session(engine) as session:
        bob = auth.User(id=auth.account_id(session, name="bob") or 0, name="bob", role="annotator")
    process = _run(code, "import", labelled, db, stdout=subprocess.PIPE)
    assert process.stdout is not None
    json.loads(process.stdout.readline())
    waits, outcomes = [], []
    candidate_id = 1
    while process.poll() is None:
        start = time.perf_counter()
        try:
            with _page_write(engine, bob, code) as session:
                queue.decide(session, annotator_id=bob.id, candidate_id=candidate_id, human_check=1,
                             difficulty_eval=0)
            outcomes.append("saved")
        except Exception as exc:  # the busy error the page turns into its one-line message
            outcomes.append(type(exc).__name__)
        waits.append(time.perf_counter() - start)
        candidate_id += 1
        time.sleep(1)
    result = json.loads(process.stdout.read().strip().splitlines()[-1])
    engine.dispose()
    # No press at all when the import ended first (a tiny sheet).
    return {**result, "longest_wait": max(waits, default=0.0), "presses": len(waits), "saved": outcomes.count("saved"),
            "refused": len(outcomes) - outcomes.count("saved")}


def _run(code: Path, mode: str, path: Path, db: Path, **kwargs: Any) -> subprocess.Popen[str]:
    """This script's `mode` in a subprocess, with the code of the checkout `code`."""
    return subprocess.Popen([sys.executable, str(code / "bench" / Path(__file__).name), "--child", mode, str(path),
                             str(db)], text=True, cwd=code, env={**os.environ, "PYTHONPATH": str(code)}, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose import is timed")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, path, db = args.child
        {"setup": setup, "import": child}[mode](Path(path), Path(db))
        return
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_label_import import _copy, make_sheets

    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        labelled, unlabelled = make_sheets(directory, args.labels)
        prepared = directory / "prepared.sqlite"
        assert _run(args.code.resolve(), "setup", unlabelled, prepared).wait() == 0
        for i in range(args.repeat):
            copy = _copy(prepared, directory / f"run{i}.sqlite")
            runs.append(_one(labelled, copy, args.code.resolve()))
            assert runs[-1]["labels_added"] == args.labels, runs[-1]
    print(f"{args.labels:,} labels, code {args.code}, load average {os.getloadavg()[0]:.1f} "
          f"(median of {args.repeat}; each run: import s / lock s / longest wait s)")
    for key in ("seconds", "lock_seconds", "longest_wait"):
        print(f"  {key:13} {statistics.median(r[key] for r in runs):6.2f}   "
              + " ".join(f"{r[key]:.2f}" for r in runs))
    print(f"  presses during the imports: {sum(r['presses'] for r in runs)}, saved {sum(r['saved'] for r in runs)}, "
          f"refused as busy {sum(r['refused'] for r in runs)}")


if __name__ == "__main__":
    main()
