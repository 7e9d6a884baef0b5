"""transcript pages at scale: the review queue's index, the reviewed transcripts' partial index, the candidates'
attributes the report joins

Revision ID: 0015_transcript_scale
Revises: 0014_label_scale

`ix_transcript_review` orders transcripts as the review queue does (`models.QUEUE_PART`, `models.QUEUE_WITHIN`), so
that Review reads the queue's next transcripts from it instead of every transcript; `ix_transcript_reviewed`
holds the reviewed transcripts only (the report's judge-human pairs, the tags chart); `ix_candidate_report`
covers what the report joins of each candidate (data source, rewrite type, difficulty) and
`ix_transcript_candidate` (which replaces `ix_transcript_candidate_id`, its first column) what it counts of each
response in candidate order, so that a report over a million items merges two indexes, not the wide rows;
`ix_transcript_samples` holds the responses beyond an item's first sample (none: the report needs no grouping
per item). All are built from the rows already stored: nothing else to
backfill.
"""

from collections.abc import Sequence

from alembic import op

from annotator.database.light_tables import QUEUE_PART, QUEUE_WITHIN, REVIEWED, SEVERAL_SAMPLES

revision: str = "0015_transcript_scale"
down_revision: str | Sequence[str] | None = "0014_label_scale"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(f"CREATE INDEX ix_transcript_review ON transcript ({QUEUE_PART}, {QUEUE_WITHIN}, id)")
    op.execute(f"CREATE INDEX ix_transcript_reviewed ON transcript (candidate_id, problem_id, model, prompt, judge, human) "
               f"WHERE {REVIEWED}")
    op.execute(f"CREATE INDEX ix_transcript_samples ON transcript (model) WHERE {SEVERAL_SAMPLES}")
    op.create_index("ix_candidate_report", "candidate", ["id", "data_source", "rewrite_type", "difficulty_eval"])
    op.drop_index("ix_transcript_candidate_id", table_name="transcript")
    op.create_index("ix_transcript_candidate", "transcript", ["candidate_id", "model", "prompt", "judge", "human"])


def downgrade() -> None:
    op.drop_index("ix_transcript_candidate", table_name="transcript")
    op.create_index("ix_transcript_candidate_id", "transcript", ["candidate_id"])
    op.drop_index("ix_candidate_report", table_name="candidate")
    op.execute("DROP INDEX ix_transcript_samples")
    op.execute("DROP INDEX ix_transcript_reviewed")
    op.execute("DROP INDEX ix_transcript_review")
