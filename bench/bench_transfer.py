"""Importing and exporting through the browser's core (`annotator.import_export.uploads`) against the command line's
path, measured in the same run.

    python bench/bench_transfer.py [--umwp 20000] [--repeat 3]

Data: the ReliableMath release (`../shared/data/reliablemath`, 313 problems, 1102 candidates) zipped as a user
uploads it, and a UMWP-shaped JSONL of `--umwp` records (half answerable, half unanswerable, a few with the real
file's bare-number answer). Timed, each on a fresh SQLite file: what the Import button does (unpack the upload,
preview every record, import) against `python -m annotator import`'s code path on the same files (read +
`import_parts`); and the download (`transfer.export_zip`) against `exports.export` into a folder. Prints the
median of `--repeat` runs and the ratios.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.database.engine import get_engine  # noqa: E402
from annotator.import_export import exports  # noqa: E402
from annotator.import_export import uploads as transfer  # noqa: E402
from annotator.import_export.formats import read  # noqa: E402
from annotator.import_export.importer import import_parts  # noqa: E402

RELEASE = ROOT.parent / "shared" / "data" / "reliablemath"


def umwp_lines(count: int) -> bytes:
    lines = []
    for i in range(count):
        answerable = i % 2 == 0
        lines.append({
            "id": i, "question": f"Tom has {i} apples and buys 4 more. How many apples does he have?",
            "answer": [float(i + 4)] if answerable else (2 if i % 97 == 1 else None), "answerable": answerable,
            "category": None if answerable else 1 + i % 5, "relevant_ids": None if answerable else [i - 1],
            "source": "SVAMP",
        })
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def release_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(RELEASE.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(RELEASE).as_posix())
    return buffer.getvalue()


def timed(action: Callable[[Path], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            action(Path(folder))
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def through_the_page(uploads: list[tuple[str, bytes]]) -> Callable[[Path], object]:
    def run(folder: Path) -> object:
        engine = get_engine(f"sqlite:///{folder / 'db.sqlite'}")
        with transfer.unpacked(uploads) as batch:
            transfer.preview(batch)
            return transfer.import_batch(batch, engine=engine)

    return run


def through_the_cli(path: Path) -> Callable[[Path], object]:
    def run(folder: Path) -> object:
        return import_parts(read(path), engine=get_engine(f"sqlite:///{folder / 'db.sqlite'}"))

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--umwp", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        umwp = Path(folder) / "StandardDataset.jsonl"
        umwp.write_bytes(umwp_lines(args.umwp))
        cases = {
            "release (1,415 records)": ([("release.zip", release_zip())], RELEASE),
            f"UMWP ({args.umwp:,} records)": ([(umwp.name, umwp.read_bytes())], umwp),
        }
        for name, (uploads, path) in cases.items():
            page = timed(through_the_page(uploads), args.repeat)
            cli = timed(through_the_cli(path), args.repeat)
            print(f"import {name}: page {page:.2f} s, CLI path {cli:.2f} s, ratio {page / cli:.2f}x")
        engine = get_engine(f"sqlite:///{Path(folder) / 'full.sqlite'}")
        import_parts(read(RELEASE), engine=engine)
        zipped = timed(lambda _folder: transfer.export_zip("reliablemath", engine=engine), args.repeat)
        plain = timed(lambda out: exports.export("reliablemath", out / "out", engine=engine), args.repeat)
        print(f"export reliablemath: zip {zipped:.2f} s, CLI path {plain:.2f} s, ratio {zipped / plain:.2f}x")


if __name__ == "__main__":
    main()
