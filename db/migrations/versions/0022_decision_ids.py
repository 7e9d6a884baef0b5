"""decisions sent from the browser: their ids, stored once, on the events they made

Revision ID: 0022_decision_ids
Revises: 0021_imported_labels

The queue pages hold the next items in the browser and send each decision in the background with an id made in
the browser; a decision may arrive twice (sent again when its answer was lost, or after a reload). `sentdecision`
keeps each id once with its outcome, so the second arrival is answered without being stored again, and the label
and review events name the decision that made them (`decision_id`). Both are new: no existing row changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0022_decision_ids"
down_revision: str | Sequence[str] | None = "0021_imported_labels"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_EVENTS = ("annotationevent", "transcriptevent")


def upgrade() -> None:
    op.create_table(
        "sentdecision",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=36), primary_key=True),
        sa.Column("annotator_id", sa.Integer(), sa.ForeignKey("annotator.id"), nullable=False),
        sa.Column("page", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("pressed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("received_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("outcome", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
    )
    for table in _EVENTS:
        op.add_column(table, sa.Column("decision_id", sqlmodel.sql.sqltypes.AutoString(length=36), nullable=True))
        op.create_index(f"ix_{table}_decision_id", table, ["decision_id"])


def downgrade() -> None:
    for table in _EVENTS:
        op.drop_index(f"ix_{table}_decision_id", table_name=table)
        # In place (SQLite 3.35 on): a batch copy of the table would lose the events' append-only triggers.
        op.execute(f"ALTER TABLE {table} DROP COLUMN decision_id")
    op.drop_table("sentdecision")
