"""How long a label import holds SQLite's write lock, and how long an annotator's label waits meanwhile.

    python bench/bench_import_lock.py [--labels 300000]

Set-up (untimed): the bench_label_import sheet's rows without labels are imported, so every label of the
timed import lands on an existing candidate. Timed, in a subprocess: `import_parts(read(sheet,
annotator=alice))`, the code path of `python -m annotator import sheet.json --annotator alice`. Measured there:
the whole import, and the time from its `BEGIN IMMEDIATE` to its `COMMIT` (engine events; the write lock is
held exactly that long). Meanwhile, in this process, an annotator's label is recorded through the function the
Annotate page uses (`ui.writes.page_write` + `queue.decide`), once a second: how long each waited for the lock.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def child(path: Path, db: Path) -> None:
    from sqlalchemy import event

    from annotator.db import get_engine
    from annotator.formats import ReadOptions, read
    from annotator.importer import import_parts

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


def _page_write(engine, user):  # type: ignore[no-untyped-def]
    try:
        from ui.writes import page_write
    except ImportError:  # before ui.writes existed: the page wrote through write_session
        from annotator.db import write_session

        return write_session(engine)
    return page_write(engine, user=user)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", type=int, default=300_000)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]))
        return
    from bench_label_import import make_sheets

    from annotator import auth, queue
    from annotator.db import get_engine, write_session
    from annotator.formats import read
    from annotator.importer import import_parts

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        labelled, unlabelled = make_sheets(directory, args.labels)
        db = directory / "db.sqlite"
        engine = get_engine(f"sqlite:///{db}")
        import_parts(read(unlabelled), engine=engine)
        with write_session(engine) as session:
            bob = auth.create_user(session, name="bob", role="annotator", password="a long bench password")
        process = subprocess.Popen([sys.executable, __file__, "--child", str(labelled), str(db)],
                                   stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        json.loads(process.stdout.readline())
        waits, outcomes = [], []
        candidate_id = 1
        while process.poll() is None:
            start = time.perf_counter()
            try:
                with _page_write(engine, bob) as session:
                    queue.decide(session, annotator_id=bob.id, candidate_id=candidate_id, human_check=1,
                                 difficulty_eval=0)
                outcomes.append("saved")
            except Exception as exc:  # the busy error the page turns into its one-line message
                outcomes.append(type(exc).__name__)
            waits.append(time.perf_counter() - start)
            candidate_id += 1
            time.sleep(1)
        result = json.loads(process.stdout.read().strip().splitlines()[-1])
    assert result["labels_added"] == args.labels, result
    print(f"{args.labels:,} labels imported in {result['seconds']:.1f} s; "
          f"write lock held {result['lock_seconds']:.2f} s")
    print(f"  an annotator's label during the import, {len(waits)} tries: longest wait {max(waits):.2f} s, "
          f"{outcomes.count('saved')} saved, others: {sorted(set(outcomes) - {'saved'})}")


if __name__ == "__main__":
    main()
