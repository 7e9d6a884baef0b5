"""shared state: the slow pages' latest figures and the sign-in cookie's one-time codes, in the database

Revision ID: 0016_shared_state
Revises: 0015_transcript_scale

Several app servers on one database behave as one app: the Team and Report figures one server computed are
read by the others (`figuresnapshot`, with a lease so that one server recomputes at a time), and the one-time
code a page posts for its sign-in cookie may reach any server (`signincode`: hashed, short-lived, single use).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0016_shared_state"
down_revision: str | Sequence[str] | None = "0015_transcript_scale"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "figuresnapshot",
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("version", sa.Text(), nullable=True),
        sa.Column("value", sa.Text(), nullable=True),
        sa.Column("computed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("seconds", sa.Float(), nullable=True),
        sa.Column("lease_holder", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.Column("lease_until", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("error", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_table(
        "signincode",
        sa.Column("code_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("sealed_token", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("max_age", sa.Integer(), nullable=False),
        sa.Column("expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("code_hash"),
    )
    with op.batch_alter_table("signincode", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_signincode_expires_at"), ["expires_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("signincode", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_signincode_expires_at"))
    op.drop_table("signincode")
    op.drop_table("figuresnapshot")
