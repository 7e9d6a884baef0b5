"""Excel batches round trip at team size, on a real SQLite file.

    python bench/bench_batches.py [--candidates 6000] [--annotators 3] [--overlap 2]

Set-up (untimed): N candidates, the annotators' accounts, labels_per_candidate = overlap. Timed: `batches`
(claims + writing every sheet), filling every row with openpyxl (as an annotator would; reported, not ours),
importing all sheets (`import`), and `export --format labels` as JSONL with history. For scale it also times
`json.load` + `executemany` of the same labels into a bare table (the floor the label-import benchmark uses).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openpyxl import load_workbook  # noqa: E402

from annotator.database.engine import get_engine, write_session  # noqa: E402
from annotator.import_export import exports  # noqa: E402
from annotator.import_export.formats import read  # noqa: E402
from annotator.import_export.importer import import_parts  # noqa: E402
from annotator.labelling import queue  # noqa: E402
from annotator.labelling.batches import create_batches  # noqa: E402
from tests.support.candidates import add_candidates, add_user  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=6000)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--overlap", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        engine = get_engine(f"sqlite:///{work / 'bench.sqlite'}")
        add_candidates(engine, args.candidates)
        names = [f"a{i}" for i in range(args.annotators)]
        for name in names:
            add_user(engine, name)
        with write_session(engine) as session:
            queue.set_labels_per_candidate(session, value=args.overlap)

        start = time.perf_counter()
        made = create_batches(engine, out=work / "sheets", annotators=names, overlap=args.overlap)
        t_batches = time.perf_counter() - start
        rows = sum(len(ids) for ids in made.assigned.values())

        start = time.perf_counter()
        for name in names:
            workbook = load_workbook(work / "sheets" / f"{name}.xlsx")
            for number in range(2, workbook.active.max_row + 1):
                workbook.active.cell(row=number, column=8, value=number % 2)
                workbook.active.cell(row=number, column=9, value=0 if number % 2 else None)
            workbook.save(work / "sheets" / f"{name}.xlsx")
        t_fill = time.perf_counter() - start

        start = time.perf_counter()
        summary = import_parts([p for n in names for p in read(work / "sheets" / f"{n}.xlsx")], engine=engine)
        t_import = time.perf_counter() - start
        assert summary.labels_added == rows, summary

        start = time.perf_counter()
        manifest = exports.export("labels", work / "labels", engine=engine, options={"with_history": True})
        t_export = time.perf_counter() - start
        assert manifest["files"]["labels.jsonl"]["records"] == rows

        labels = [{"candidate_id": i, "annotator_id": i % 7, "human_check": i % 2} for i in range(rows)]
        (work / "floor.json").write_text(json.dumps(labels))
        start = time.perf_counter()
        data = json.loads((work / "floor.json").read_text())
        with sqlite3.connect(work / "floor.sqlite") as conn:
            conn.execute("CREATE TABLE t (candidate_id INT, annotator_id INT, human_check INT)")
            conn.executemany("INSERT INTO t VALUES (:candidate_id, :annotator_id, :human_check)", data)
        t_floor = time.perf_counter() - start

    print(f"{args.candidates} candidates, {args.annotators} annotators, overlap {args.overlap}: {rows} sheet rows")
    print(f"batches (claims + {args.annotators} sheets): {t_batches:.2f} s ({rows / t_batches:,.0f} rows/s)")
    print(f"filling the sheets with openpyxl (not ours): {t_fill:.2f} s")
    print(f"import of the filled sheets: {t_import:.2f} s ({rows / t_import:,.0f} labels/s)")
    print(f"export --format labels --with-history: {t_export:.2f} s")
    print(f"floor, json.load + executemany of as many rows: {t_floor:.3f} s; import / floor = {t_import / t_floor:.1f}")


if __name__ == "__main__":
    main()
