"""judgements: an LLM judge's verdict on a transcript with its one-line reason

Revision ID: 0012_judgements
Revises: 0011_workers

One row per transcript and judge (rule "llm", the judge's model, its prompt version), so that every LLM judge's
verdicts are kept side by side and compared with the reviewers (`annotator.transcripts.report.judges`).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0012_judgements"
down_revision: str | Sequence[str] | None = "0011_workers"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "judgement",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("transcript_id", sa.Integer(), nullable=False),
        sa.Column("rule", sqlmodel.sql.sqltypes.AutoString(length=50), nullable=False),
        sa.Column("model", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
        sa.Column("prompt_version", sqlmodel.sql.sqltypes.AutoString(length=50), nullable=False),
        sa.Column("verdict", sqlmodel.sql.sqltypes.AutoString(length=1), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["transcript_id"], ["transcript.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("transcript_id", "rule", "model", "prompt_version"),
    )
    with op.batch_alter_table("judgement", schema=None) as batch_op:
        batch_op.create_index("ix_judgement_judge", ["rule", "model", "prompt_version"], unique=False)
        batch_op.create_index(batch_op.f("ix_judgement_transcript_id"), ["transcript_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("judgement", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_judgement_transcript_id"))
        batch_op.drop_index("ix_judgement_judge")
    op.drop_table("judgement")
