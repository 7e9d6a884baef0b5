"""generation runs become runs of a kind

Revision ID: 0004_runs
Revises: 0003_auth

The `generationrun` table becomes `run`, with a `kind` column ("generate" for every existing row) and a
`counters` column for what only one kind counts. Existing runs keep their ids and every value.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

import annotator.database.models

revision: str = "0004_runs"
down_revision: str | Sequence[str] | None = "0003_auth"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _rename(old: str, new: str) -> None:
    op.rename_table(old, new)
    if op.get_bind().dialect.name == "postgresql":
        # PostgreSQL names the id sequence and the primary key after the table; follow the new name.
        op.execute(f"ALTER SEQUENCE {old}_id_seq RENAME TO {new}_id_seq")
        op.execute(f"ALTER INDEX {old}_pkey RENAME TO {new}_pkey")


def upgrade() -> None:
    _rename("generationrun", "run")
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=True))
        batch_op.add_column(sa.Column("counters", annotator.database.models.JSONText(), nullable=True))
    op.execute("UPDATE run SET kind = 'generate'")
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.alter_column("kind", existing_type=sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False)


def downgrade() -> None:
    # The old table holds generate runs only; runs of other kinds cannot go back.
    op.execute("DELETE FROM run WHERE kind <> 'generate'")
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.drop_column("counters")
        batch_op.drop_column("kind")
    _rename("run", "generationrun")
