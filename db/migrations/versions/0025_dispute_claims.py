"""dispute claims: the disputed and audit-sample candidates a reviewer's browser holds ahead

Revision ID: 0025_dispute_claims
Revises: 0022_decision_ids

Adjudicate holds the next disputes (or audit-sample candidates) in the reviewer's browser; each is claimed for
the reviewer until it expires, so that no more than two reviewers hold one at once. A new table: no existing row
changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0025_dispute_claims"
down_revision: str | Sequence[str] | None = "0022_decision_ids"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "disputeclaim",
        sa.Column("candidate_id", sa.Integer(), sa.ForeignKey("candidate.id"), primary_key=True),
        sa.Column("reviewer_id", sa.Integer(), sa.ForeignKey("annotator.id"), primary_key=True),
        sa.Column("queue", sqlmodel.sql.sqltypes.AutoString(length=20), primary_key=True),
        sa.Column("expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    )
    op.create_index("ix_disputeclaim_reviewer_id", "disputeclaim", ["reviewer_id"])


def downgrade() -> None:
    op.drop_index("ix_disputeclaim_reviewer_id", table_name="disputeclaim")
    op.drop_table("disputeclaim")
