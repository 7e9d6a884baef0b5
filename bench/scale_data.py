"""The 1,000,000-candidate data set on PostgreSQL, built with COPY into our own schema.

    python bench/scale_data.py --server postgresql://postgres@127.0.0.1:55433 --database scale_template
    python bench/scale_data.py --server ... --database scale_template_100k --candidates 100000

What it holds (as `../shared/measurements/scale-1m.md` describes the measured data):
- N candidates, 5 per problem (`remove` 1-3, `contradict` 1-2), the problems split between two data sources,
  `bench` and `benchgsm` (positions counted from 0 in each); every candidate `pending`, its rewritten question
  ending `(rewrite rPx)` with P its problem's position (the mark `bench_queue_keys.py`'s probe looks for);
- labels: annotators a1, a2, a3 label every candidate (each accepts about 80%, independently, so most candidates
  are disputes), a4 a tenth of them more, 1% of labels with a comment; `labels_per_candidate` = 4, so a candidate
  with 3 labels is still in the queue and one with 4 is complete; a reviewer's decision on 0.5% of the disputes;
  a `create` event per label and an `adjudicate` event per decision, as `labels.record_labels` writes them; each
  candidate's resolved label stored by the label writer's own statement (`_label_writer._resolved_labels`);
- N transcripts, one per candidate (each answering a different item), 4 models x 2 prompts, responses of about
  1,500 characters ending `(response rPx)`, a judge verdict on 99% of them and a human verdict (with its
  `review` event) on 2%;
- users (password `bench-password-long`): `ann` (annotator without labels: the whole queue is hers), `a1`-`a4`
  (the annotators whose labels these are), `rev` (reviewer), `admin` (admin).

The schema is our migrations' (`annotator.database.engine.upgrade` to head); rows go in with `COPY` (psycopg 3's
`cursor.copy`) with the secondary indexes, unique and foreign-key constraints dropped and made again after
(exactly as the catalog defined them), then `VACUUM ANALYZE`. The database is dropped and made anew.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.accounts import auth  # noqa: E402
from annotator.database.engine import get_engine, write_session  # noqa: E402
from annotator.labelling._label_writer import _resolved_labels  # noqa: E402
from annotator.labelling.queue import set_labels_per_candidate  # noqa: E402

PASSWORD = "bench-password-long"
USERS = [("ann", "annotator"), ("a1", "annotator"), ("a2", "annotator"), ("a3", "annotator"),
         ("a4", "annotator"), ("rev", "reviewer"), ("admin", "admin")]
SOURCES = ("bench", "benchgsm")
KINDS = [("remove", 1), ("remove", 2), ("contradict", 1), ("contradict", 2), ("remove", 3)]
MODELS = [f"model-{i}" for i in range(4)]
PROMPTS = ("standard", "reliable")
CLASSES = ["incorrect"] * 6 + ["unsolvable"] * 2 + ["unknown", "unmatched"]
VERDICTS = {"unsolvable": "S", "unknown": "R"}
_STEP = "Since $x > {k}$ and $x^2 = {k2}$, we get $x = \\sqrt{{{k2}}}$, so $x \\cdot x - {k} = {d}$. "
RESPONSE = "".join(_STEP.format(k=k, k2=k * k, d=k * k - k) for k in range(1, 20)) + "So $\\boxed{4}$."
START = datetime(2026, 9, 1, tzinfo=UTC)
DAYS = 60


def _stamp(index: int, total: int) -> datetime:
    """A time within the DAYS before now's data set, in the order of `index`."""
    return START + timedelta(seconds=int(index * DAYS * 86_400 / max(total, 1)))


def _problem_place(problem_id: int, problems: int) -> tuple[str, int]:
    half = (problems + 1) // 2
    index = problem_id - 1
    return (SOURCES[0], index) if index < half else (SOURCES[1], index - half)


def _question(source: str, position: int) -> str:
    return (f"Problem {position} of {source}: let $x > {position}$ and $x < {position + 2}$ be an integer. "
            f"A shop sells {position % 17 + 3} apples each day. Find $x^2$.")


def _copy_problems(cur: psycopg.Cursor, problems: int) -> None:
    columns = "id, data_source, position, source_id, question, ground_truth, solution, created_at"
    with cur.copy(f"COPY problem ({columns}) FROM STDIN") as copy:
        for pid in range(1, problems + 1):
            source, position = _problem_place(pid, problems)
            question = _question(source, position)
            copy.write_row((pid, source, position, str(position), question, f'"{(position + 1) ** 2}"',
                            f"Since x is an integer strictly between {position} and {position + 2}, "
                            f"x = {position + 1}.",
                            _stamp(pid, problems)))


def _copy_candidates(cur: psycopg.Cursor, candidates: int, problems: int) -> None:
    columns = ("id, problem_id, data_id, data_source, rewrite_type, condition_index, extracted_condition, "
               "rewritten_question, rewritten_condition, unsolvable_reason, question, ground_truth, llm_outputs, "
               "status, position, label_count, created_at, updated_at")
    with cur.copy(f"COPY candidate ({columns}) FROM STDIN") as copy:
        for cid in range(1, candidates + 1):
            pid = (cid - 1) // 5 + 1
            rewrite_type, k = KINDS[(cid - 1) % 5]
            source, position = _problem_place(pid, problems)
            question = _question(source, position)
            if rewrite_type == "remove":
                rewritten = (f"Problem {position} of {source}: let $x > {position}$ be an integer. A shop sells "
                             f"{position % 17 + 3} apples each day (variant {k}). Find $x^2$. (rewrite r{position}x)")
                condition, reason = f"removed $x < {position + 2}$", "Without the upper bound $x$ is not unique."
            else:
                rewritten = (f"Problem {position} of {source}: let $x > {position + 5}$ and $x < {position + 2}$ be "
                             f"an integer (variant {k}). Find $x^2$. (rewrite r{position}x)")
                condition, reason = f"$x > {position + 5}$", "No integer is both above and below those bounds."
            stamp = _stamp(cid, candidates)
            copy.write_row((cid, pid, f"{source}_{position}_{rewrite_type}_{k}", source, rewrite_type, k,
                            f"$x < {position + 2}$", rewritten, condition, reason, question,
                            f'"{(position + 1) ** 2}"', '{"verification": "True"}', "pending", cid - 1, 0, stamp,
                            stamp))


def _copy_labels(cur: psycopg.Cursor, candidates: int, people: dict[str, int], rng: random.Random) -> list[tuple]:
    """The labels; returns the decisions to write (candidate, human_check, difficulty_eval) on some disputes."""
    columns = ("id, candidate_id, annotator_id, human_check, difficulty_eval, comment, seconds_spent, created_at, "
               "updated_at")
    decisions = []
    label_id = 0
    annotators = [people["a1"], people["a2"], people["a3"]]
    with cur.copy(f"COPY annotation ({columns}) FROM STDIN") as copy:
        for cid in range(1, candidates + 1):
            who = annotators + [people["a4"]] if rng.random() < 0.1 else annotators
            checks = []
            for annotator_id in who:
                label_id += 1
                accepted = rng.random() < 0.8
                checks.append(accepted)
                comment = "The rewrite is ambiguous." if rng.random() < 0.01 else None
                stamp = _stamp(cid, candidates) + timedelta(minutes=annotator_id)
                copy.write_row((label_id, cid, annotator_id, int(accepted), rng.randint(0, 1) if accepted else None,
                                comment, round(rng.uniform(5, 90), 1), stamp, stamp))
            if len(set(checks)) > 1 and rng.random() < 0.005:
                accepted = rng.random() < 0.5
                decisions.append((cid, int(accepted), rng.randint(0, 1) if accepted else None))
    return decisions


def _copy_decisions(cur: psycopg.Cursor, decisions: list[tuple], reviewer: int, candidates: int) -> None:
    columns = "candidate_id, annotator_id, human_check, difficulty_eval, comment, created_at, updated_at"
    with cur.copy(f"COPY adjudication ({columns}) FROM STDIN") as copy:
        for cid, check, difficulty in decisions:
            stamp = _stamp(cid, candidates) + timedelta(hours=2)
            copy.write_row((cid, reviewer, check, difficulty, None, stamp, stamp))


def _copy_transcripts(cur: psycopg.Cursor, candidates: int, problems: int, reviewer: int, rng: random.Random) -> None:
    columns = ("id, data_id, problem_id, candidate_id, model, prompt, sample, response, finish_reason, "
               "completion_tokens, source, extracted_answer, judge_rule, judge_version, judge_class, judge, "
               "differs_from_reference, human, tags, reviewed_by, reviewed_at, created_at")
    with cur.copy(f"COPY transcript ({columns}) FROM STDIN") as copy:
        for cid in range(1, candidates + 1):
            pid = (cid - 1) // 5 + 1
            rewrite_type, k = KINDS[(cid - 1) % 5]
            source, position = _problem_place(pid, problems)
            judge_class = CLASSES[cid % len(CLASSES)] if cid % 97 else None
            human = rng.choice("SRF") if rng.random() < 0.02 else None
            stamp = _stamp(cid, candidates)
            copy.write_row((
                cid, f"{source}_{position}_{rewrite_type}_{k}", pid, cid, MODELS[cid % 4], PROMPTS[cid // 4 % 2], 0,
                f"{RESPONSE} (response r{position}x)", "stop", 600, "bench", "4" if judge_class else None,
                "reliablemath", "1", judge_class, VERDICTS.get(judge_class, "F") if judge_class else None,
                cid % 211 == 0, human, "[]" if human else None, reviewer if human else None,
                stamp + timedelta(days=1) if human else None, stamp,
            ))


# Events as the label writer and the review write them: JSON text as `json.dumps` makes it.
_LABEL_JSON = """'{"human_check": ' || human_check || ', "difficulty_eval": ' || coalesce(difficulty_eval::text, 'null')
  || ', "comment": ' || coalesce(to_json(comment)::text, 'null') || '}'"""
_EVENTS = [
    f"""INSERT INTO annotationevent (candidate_id, annotator_id, action, old, new, at)
        SELECT candidate_id, annotator_id, 'create', NULL, {_LABEL_JSON}, created_at FROM annotation ORDER BY id""",
    f"""INSERT INTO annotationevent (candidate_id, annotator_id, action, old, new, at)
        SELECT candidate_id, annotator_id, 'adjudicate', NULL, {_LABEL_JSON}, created_at FROM adjudication
        ORDER BY candidate_id""",
    """INSERT INTO transcriptevent (transcript_id, annotator_id, action, old, new, at)
        SELECT id, reviewed_by, 'review', '{"human": null, "tags": null, "comment": null}',
               '{"human": "' || human || '", "tags": [], "comment": null}', reviewed_at
        FROM transcript WHERE human IS NOT NULL ORDER BY id""",
]


def _secondary(cur: psycopg.Cursor) -> tuple[list[str], list[str]]:
    """The statements that drop and that make again the public schema's indexes and constraints other than primary
    keys, from the catalog: so the load writes no index entry and checks no key row by row."""
    cur.execute("""SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid), c.contype
                   FROM pg_constraint c WHERE c.connamespace = 'public'::regnamespace AND c.contype IN ('u', 'f')
                   ORDER BY c.contype = 'f' DESC, c.conname""")
    constraints = cur.fetchall()
    cur.execute("""SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i
                   JOIN pg_class t ON t.oid = i.indrelid WHERE t.relnamespace = 'public'::regnamespace
                   AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)""")
    indexes = cur.fetchall()
    drop = [f'ALTER TABLE {table} DROP CONSTRAINT "{name}"' for table, name, _, _ in constraints]
    drop += [f"DROP INDEX {name}" for name, _ in indexes]
    make = [definition for _, definition in indexes]
    make += [f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}'
             for table, name, definition, _ in reversed(constraints)]
    return drop, make


def _resolve(engine, candidates: int) -> None:  # type: ignore[no-untyped-def]
    """Each candidate's label_count, resolved label and its source, by the label writer's own statement."""
    now = datetime.now(UTC)
    with engine.begin() as connection:
        for start in range(1, candidates + 1, 50_000):
            connection.execute(_resolved_labels(range(start, min(candidates, start + 49_999) + 1), now=now,
                                                unlabelled=False, dialect=connection.dialect.name))


def _timed(label: str, started: float) -> float:
    now = time.perf_counter()
    print(f"  {label}: {now - started:.1f} s", flush=True)
    return now


def build(server: str, database: str, candidates: int, seed: int = 0) -> dict[str, int]:
    """Drop and build `database` on `server` (a postgresql:// URL without a database); returns the row counts."""
    problems = (candidates + 4) // 5
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{database}"')
    url = f"{server.replace('postgresql://', 'postgresql+psycopg://')}/{database}"
    engine = get_engine(url)  # our migrations, to head
    with write_session(engine) as session:
        set_labels_per_candidate(session, value=4)
        people = {name: auth.create_user(session, name=name, role=role, password=PASSWORD).id for name, role in USERS}
    rng = random.Random(seed)
    clock = time.perf_counter()
    with psycopg.connect(f"{server}/{database}") as conn, conn.cursor() as cur:
        cur.execute("SET session_replication_role = replica")  # no foreign-key triggers while loading
        drop, make = _secondary(cur)
        for statement in drop:
            cur.execute(statement)
        _copy_problems(cur, problems)
        _copy_candidates(cur, candidates, problems)
        clock = _timed("problems and candidates", clock)
        decisions = _copy_labels(cur, candidates, people, rng)
        _copy_decisions(cur, decisions, people["rev"], candidates)
        clock = _timed("labels", clock)
        _copy_transcripts(cur, candidates, problems, people["rev"], rng)
        clock = _timed("transcripts", clock)
        for statement in _EVENTS:
            cur.execute(statement)
        clock = _timed("events", clock)
        cur.execute("SET maintenance_work_mem = '1GB'")
        for statement in make:
            cur.execute(statement)
        clock = _timed("indexes and constraints", clock)
        for table in ("problem", "candidate", "annotation", "annotationevent", "transcript", "transcriptevent"):
            cur.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
        conn.commit()
    _resolve(engine, candidates)
    clock = _timed("resolved labels", clock)
    engine.dispose()
    with psycopg.connect(f"{server}/{database}", autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        _timed("VACUUM ANALYZE", clock)
        tables = ("problem", "candidate", "annotation", "annotationevent", "adjudication", "transcript",
                  "transcriptevent", "annotator")
        return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in tables}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:55433",
                        help="the server, a postgresql:// URL without the database")
    parser.add_argument("--database", default="scale_template", help="dropped and built anew")
    parser.add_argument("--candidates", type=int, default=1_000_000)
    args = parser.parse_args()
    started = time.perf_counter()
    counts = build(args.server, args.database, args.candidates)
    print(f"built {args.database} in {time.perf_counter() - started:.0f} s: "
          + ", ".join(f"{table} {count:,}" for table, count in counts.items()))


if __name__ == "__main__":
    main()
