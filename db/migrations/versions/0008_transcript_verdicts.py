"""transcript verdicts index: the report counts verdicts from this index alone

Revision ID: 0008_transcript_verdicts
Revises: 0007_issue_11b

A covering index over what `annotator.transcripts.report.scores` groups by, so that counting 100,000s of verdicts reads
the index instead of every row (on SQLite the columns after `response` sit behind its overflow pages).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008_transcript_verdicts"
down_revision: str | Sequence[str] | None = "0007_issue_11b"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ["model", "prompt", "problem_id", "candidate_id", "judge", "human"]


def upgrade() -> None:
    op.create_index("ix_transcript_verdicts", "transcript", COLUMNS, unique=False)


def downgrade() -> None:
    op.drop_index("ix_transcript_verdicts", table_name="transcript")
