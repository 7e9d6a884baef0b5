"""sign-in sessions and queue claims

Revision ID: 0003_auth
Revises: 0002_llm
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0003_auth"
down_revision: str | Sequence[str] | None = "0002_llm"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "signinsession",
        sa.Column("token_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotator.id"]),
        sa.PrimaryKeyConstraint("token_hash"),
    )
    with op.batch_alter_table("signinsession", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_signinsession_annotator_id"), ["annotator_id"], unique=False)

    op.create_table(
        "candidateclaim",
        sa.Column("candidate_id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotator.id"]),
        sa.ForeignKeyConstraint(["candidate_id"], ["candidate.id"]),
        sa.PrimaryKeyConstraint("candidate_id", "annotator_id"),
    )
    with op.batch_alter_table("candidateclaim", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_candidateclaim_annotator_id"), ["annotator_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("candidateclaim", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_candidateclaim_annotator_id"))
    op.drop_table("candidateclaim")
    with op.batch_alter_table("signinsession", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_signinsession_annotator_id"))
    op.drop_table("signinsession")
