"""`export --format inspect` against `export --format transcripts` on the same transcripts.

    python bench/bench_inspect_export.py [--models 4] [--items 1415]

Set-up (untimed): the shared ReliableMath release imported into a real SQLite file, and one answer of about
1,500 characters per item (every problem and candidate) from each of `--models` models, imported as JSONL.
Timed: the Inspect export twice (the first run includes loading inspect_ai) and the JSONL export once.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.database.engine import get_engine, read_session  # noqa: E402
from annotator.import_export import exports  # noqa: E402
from annotator.import_export.formats import read  # noqa: E402
from annotator.import_export.importer import import_parts  # noqa: E402
from annotator.transcripts import evaluation_items  # noqa: E402

RELEASE = ROOT.parent / "shared" / "data" / "reliablemath"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--items", type=int, help="answers to the release's first N items only (default: all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        engine = get_engine(f"sqlite:///{root / 'bench.sqlite'}")
        import_parts(read(RELEASE), engine=engine)
        with read_session(engine) as session:
            items = list(evaluation_items(session, item_set="all"))[: args.items]
        answers = root / "answers.jsonl"
        with answers.open("w", encoding="utf-8") as handle:
            for model in range(args.models):
                for item in items:
                    handle.write(json.dumps({"data_id": item.data_id, "model": f"model-{model}", "prompt": "reliable",
                                             "response": "Reasoning... " * 115 + "\\boxed{1}"}) + "\n")
        import_parts(read(answers), engine=engine)
        for run, format in enumerate(("inspect", "inspect", "transcripts")):
            started = time.perf_counter()
            manifest = exports.export(format, root / f"{format}-{run}", engine=engine)
            seconds = time.perf_counter() - started
            count = sum(entry["records"] for entry in manifest["files"].values())
            print(f"{format:12} {count:7,} transcripts {seconds:6.2f} s {count / seconds:8,.0f}/s")


if __name__ == "__main__":
    main()
