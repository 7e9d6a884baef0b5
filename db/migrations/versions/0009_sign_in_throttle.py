"""sign-in throttle: failed sign-ins per account and per client

Revision ID: 0009_sign_in_throttle
Revises: 0008_transcript_verdicts

One row per account name and per client address with its recent failures and until when it must wait, so
that the throttle holds across app servers (`annotator.accounts.throttle`).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0009_sign_in_throttle"
down_revision: str | Sequence[str] | None = "0008_transcript_verdicts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "signinfailure",
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_failure_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("blocked_until", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )


def downgrade() -> None:
    op.drop_table("signinfailure")
