"""transcript pages at scale: the review queue's index and the reviewed transcripts' partial index

Revision ID: 0015_transcript_scale
Revises: 0012_judgements

`ix_transcript_review` orders transcripts as the review queue does (`models.QUEUE_PART`, `models.QUEUE_WITHIN`), so
that Review reads the queue's next transcripts from it instead of every transcript; `ix_transcript_reviewed`
holds the reviewed transcripts only (the report's judge-human pairs, the tags chart). Both are built from the rows
already stored: nothing else to backfill.
"""

from collections.abc import Sequence

from alembic import op

from annotator.models import QUEUE_PART, QUEUE_WITHIN, REVIEWED

revision: str = "0015_transcript_scale"
down_revision: str | Sequence[str] | None = "0012_judgements"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(f"CREATE INDEX ix_transcript_review ON transcript ({QUEUE_PART}, {QUEUE_WITHIN}, id)")
    op.execute(f"CREATE INDEX ix_transcript_reviewed ON transcript (model, prompt, judge, human) WHERE {REVIEWED}")


def downgrade() -> None:
    op.execute("DROP INDEX ix_transcript_reviewed")
    op.execute("DROP INDEX ix_transcript_review")
