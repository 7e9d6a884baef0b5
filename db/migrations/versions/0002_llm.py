"""LLM call cache and generation runs

Revision ID: 0002_llm
Revises: 0001
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

import annotator.database.models

revision: str = "0002_llm"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "llmcall",
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("model", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
        sa.Column("request", annotator.database.models.JSONText(), nullable=True),
        sa.Column("content", sa.Text(), nullable=True),
        sa.Column("reasoning_content", sa.Text(), nullable=True),
        sa.Column("finish_reason", sqlmodel.sql.sqltypes.AutoString(length=50), nullable=True),
        sa.Column("prompt_tokens", sa.Integer(), nullable=True),
        sa.Column("completion_tokens", sa.Integer(), nullable=True),
        sa.Column("seconds", sa.Float(), nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_table(
        "generationrun",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
        sa.Column("steps", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
        sa.Column("prompt_version", sqlmodel.sql.sqltypes.AutoString(length=50), nullable=False),
        sa.Column("models", annotator.database.models.JSONText(), nullable=True),
        sa.Column("options", annotator.database.models.JSONText(), nullable=True),
        sa.Column("problems_total", sa.Integer(), nullable=False),
        sa.Column("problems_done", sa.Integer(), nullable=False),
        sa.Column("candidates_written", sa.Integer(), nullable=False),
        sa.Column("candidates_filtered", sa.Integer(), nullable=False),
        sa.Column("requests", sa.Integer(), nullable=False),
        sa.Column("cache_hits", sa.Integer(), nullable=False),
        sa.Column("retries", sa.Integer(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("unparseable", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("errors", annotator.database.models.JSONText(), nullable=True),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("started_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("heartbeat_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("finished_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("created_by", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("generationrun")
    op.drop_table("llmcall")
