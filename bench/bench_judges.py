"""The Report's judges table (`judges.judge_agreement`) computed on a big database (issue 21 item 3): its first
computation in a fresh process, then the median of five, and the part that reads the reviewed responses with
their items (`judges._reviewed`).

    python bench/bench_judges.py --url postgresql+psycopg://postgres@127.0.0.1:55433/COPY [--code DIR]

`--code` is the checkout timed (default: this one), so the same script times the code before and after a change.
Reads only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--code", default=str(Path(__file__).resolve().parent.parent))
    args = parser.parse_args()
    sys.path.insert(0, args.code)
    from annotator.database.engine import get_engine, read_session
    from annotator.transcripts.report import judges

    engine = get_engine(args.url)

    def timed(work: Callable[[Any], Any]) -> tuple[float, float, Any]:
        seconds, result = [], None
        for _ in range(6):
            with read_session(engine) as session:
                start = time.perf_counter()
                result = work(session)
                seconds.append(time.perf_counter() - start)
        return seconds[0], statistics.median(seconds[1:]), result

    first, median, table = timed(judges.judge_agreement)
    _, read, rows = timed(lambda session: judges._reviewed(session, None))
    print(f"code: {args.code}")
    print(f"  judge_agreement, first in this process     {first * 1000:8.1f} ms")
    print(f"  judge_agreement, median of 5 after         {median * 1000:8.1f} ms")
    print(f"  reviewed responses with their items ({len(rows):,})  {read * 1000:8.1f} ms")
    for row in table:
        print(f"  {row['judge']}: reviewed {row['reviewed']}, agreement {row['agreement']}, kappa {row['kappa']}, "
              f"confusion {row['confusion']}")


if __name__ == "__main__":
    main()
