"""workers: who holds a run, since when, and the worker processes serving runs

Revision ID: 0011_workers
Revises: 0010_oidc_identity

A run claimed by a worker (`python -m annotator worker`) records the worker ("host:pid:id") and when it claimed
it; its liveness is its heartbeat alone, so a worker on any machine can take over a run whose worker died.
Workers keep a row with their own heartbeat, so the app knows whether to start a process for a run.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0011_workers"
down_revision: str | Sequence[str] | None = "0010_oidc_identity"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.add_column(sa.Column("worker", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True))
        batch.add_column(sa.Column("claimed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
    op.create_table(
        "worker",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("kinds", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("started_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("heartbeat_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("worker")
    with op.batch_alter_table("run") as batch:
        batch.drop_column("claimed_at")
        batch.drop_column("worker")
