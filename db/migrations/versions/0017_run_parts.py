"""run parts: a job split into parts that workers claim apart

Revision ID: 0017_run_parts
Revises: 0016_shared_state

A big run (a judge run over many transcripts) is a job whose parts are runs of their own (`parent_id`), each
claimed, beaten and taken over by a worker as any run is; the job's row (`parts`, its number of parts) is the sum
of theirs and is never claimed itself.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_run_parts"
down_revision: str | Sequence[str] | None = "0016_shared_state"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.add_column(sa.Column("parts", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("parent_id", sa.Integer(), nullable=True))
        batch.create_index(batch.f("ix_run_parent_id"), ["parent_id"], unique=False)
        batch.create_foreign_key("fk_run_parent_id_run", "run", ["parent_id"], ["id"])


def downgrade() -> None:
    with op.batch_alter_table("run") as batch:
        batch.drop_constraint("fk_run_parent_id_run", type_="foreignkey")
        batch.drop_index(batch.f("ix_run_parent_id"))
        batch.drop_column("parent_id")
        batch.drop_column("parts")
