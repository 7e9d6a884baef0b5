"""The tables a report reads, as SQLAlchemy Core's lightweight `table()`s (names, no types), and the SQL
expressions the transcripts' indexes are built over: what a read needs of the schema without the ORM.

The `report` command reads through these so that its start-up skips SQLModel and the table classes (a third of a
second of a one-second command, issue 20). `annotator.database.models` is the schema: its classes build their indexes
from the expressions here, and tests/database/test_light_tables.py checks every column named here against them. A query
over these tables runs on a Core connection or an ORM session alike; its rows come as the driver stores them
(`annotator.database.raw_rows`), which is all a count needs.
"""

from __future__ import annotations

from sqlalchemy import column, table

# The review queue's order as two SQL expressions of a transcript row, one index over them (`ix_transcript_review`),
# so that Review reads the next few transcripts of the queue from the index (`transcripts.review_order`).
# QUEUE_PART: reviewed (3) or not (0), plus the part (`review.REASONS`: rules disagree 0, judge unsure 1, sample 2).
QUEUE_PART = ("(CASE WHEN human IS NULL THEN 0 ELSE 3 END + CASE WHEN rules_disagree THEN 0 "
              "WHEN judge IS NULL OR judge_class = 'unmatched' THEN 1 ELSE 2 END)")
# A transcript's place in the sample: a fixed pseudo-random rank of its id below 2^31 - 1 (a multiplicative
# step, a square and an affine step modulo the prime 2^31 - 1: integer arithmetic every SQL database does in 64
# bits without overflow); the rule sets' disagreements and the judge's unsure cases go by id.
_STEP = "(CAST(id AS BIGINT) * 48271 % 2147483647)"
SAMPLE_RANK_MODULUS = 2147483647
SAMPLE_RANK = f"(({_STEP} * {_STEP} % 2147483647) * 16807 + {_STEP}) % 2147483647"
QUEUE_WITHIN = (f"(CASE WHEN rules_disagree THEN id WHEN judge IS NULL OR judge_class = 'unmatched' THEN id "
                f"ELSE {SAMPLE_RANK} END)")
# Reviewed transcripts are few: what the report and the tags chart read of them comes from this partial index.
REVIEWED = "human IS NOT NULL"
# Responses beyond an item's first sample: where there are none, the report counts each response as its item's.
SEVERAL_SAMPLES = "sample <> 0"
# Indexes over expressions, which Alembic cannot compare with the database's own rendering
# (tests/database/test_engine.py).
EXPRESSION_INDEXES = frozenset({"ix_transcript_review"})

problem = table("problem", column("id"), column("data_source"))
candidate = table("candidate", column("id"), column("data_source"), column("rewrite_type"),
                  column("difficulty_eval"))
transcript = table("transcript", column("id"), column("data_id"), column("problem_id"), column("candidate_id"),
                   column("model"), column("prompt"), column("sample"), column("judge"), column("human"))

TABLES = (problem, candidate, transcript)
