"""settled index: the candidates adaptive overlap settled, counted apart from those with enough labels

Revision ID: 0028_settled_index
Revises: 0027_label_index

A queue's progress counts the pending candidates with enough labels or settled; as one condition that reads every
candidate. Counted as two, the first is a range of ix_candidate_queue and the second of this small partial index.
Only the index is made: no row changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028_settled_index"
down_revision: str | Sequence[str] | None = "0027_label_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_candidate_settled", "candidate", ["status", "label_count"],
                    sqlite_where=sa.text("settled"), postgresql_where=sa.text("settled"))


def downgrade() -> None:
    op.drop_index("ix_candidate_settled", table_name="candidate")
