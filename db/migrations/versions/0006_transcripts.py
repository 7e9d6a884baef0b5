"""transcripts: model responses on the evaluation set, their judge verdicts and reviews

Revision ID: 0006_transcripts
Revises: 0005_team
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

import annotator.database.models

revision: str = "0006_transcripts"
down_revision: str | Sequence[str] | None = "0005_team"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "transcript",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("data_id", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
        sa.Column("problem_id", sa.Integer(), nullable=False),
        sa.Column("candidate_id", sa.Integer(), nullable=True),
        sa.Column("model", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
        sa.Column("prompt", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("sample", sa.Integer(), nullable=False),
        sa.Column("response", sa.Text(), nullable=False),
        sa.Column("reasoning", sa.Text(), nullable=True),
        sa.Column("params", annotator.database.models.JSONText(), nullable=True),
        sa.Column("finish_reason", sqlmodel.sql.sqltypes.AutoString(length=50), nullable=True),
        sa.Column("prompt_tokens", sa.Integer(), nullable=True),
        sa.Column("completion_tokens", sa.Integer(), nullable=True),
        sa.Column("source", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("extracted_answer", sa.Text(), nullable=True),
        sa.Column("judge_rule", sqlmodel.sql.sqltypes.AutoString(length=50), nullable=True),
        sa.Column("judge_version", sqlmodel.sql.sqltypes.AutoString(length=50), nullable=True),
        sa.Column("judge_class", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=True),
        sa.Column("judge", sqlmodel.sql.sqltypes.AutoString(length=1), nullable=True),
        sa.Column("rules_disagree", sa.Boolean(), nullable=True),
        sa.Column("human", sqlmodel.sql.sqltypes.AutoString(length=1), nullable=True),
        sa.Column("tags", annotator.database.models.JSONText(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("reviewed_by", sa.Integer(), nullable=True),
        sa.Column("reviewed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["candidate_id"], ["candidate.id"]),
        sa.ForeignKeyConstraint(["problem_id"], ["problem.id"]),
        sa.ForeignKeyConstraint(["reviewed_by"], ["annotator.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("data_id", "model", "prompt", "sample"),
    )
    with op.batch_alter_table("transcript", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_transcript_candidate_id"), ["candidate_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_transcript_data_id"), ["data_id"], unique=False)
        batch_op.create_index("ix_transcript_model_prompt", ["model", "prompt"], unique=False)
        batch_op.create_index(batch_op.f("ix_transcript_problem_id"), ["problem_id"], unique=False)
    op.create_table(
        "transcriptevent",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("transcript_id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("action", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
        sa.Column("old", annotator.database.models.JSONText(), nullable=True),
        sa.Column("new", annotator.database.models.JSONText(), nullable=True),
        sa.Column("at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotator.id"]),
        sa.ForeignKeyConstraint(["transcript_id"], ["transcript.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("transcriptevent", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_transcriptevent_transcript_id"), ["transcript_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("transcriptevent", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_transcriptevent_transcript_id"))
    op.drop_table("transcriptevent")
    with op.batch_alter_table("transcript", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_transcript_problem_id"))
        batch_op.drop_index("ix_transcript_model_prompt")
        batch_op.drop_index(batch_op.f("ix_transcript_data_id"))
        batch_op.drop_index(batch_op.f("ix_transcript_candidate_id"))
    op.drop_table("transcript")
