"""adaptive overlap: a candidate's `settled` flag

Revision ID: 0019_adaptive_overlap
Revises: 0018_reference_rule

With adaptive overlap on (`annotator.labelling.adaptive`) a candidate whose labels already settle it (the posterior of
their majority class reaches the threshold) is complete with fewer than the most labels; the label writer stores that
as `settled`. Existing candidates are not settled (adaptive overlap starts off). SQLite (3.35 on) and PostgreSQL both
add and drop a column in place.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_adaptive_overlap"
down_revision: str | Sequence[str] | None = "0018_reference_rule"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("candidate", sa.Column("settled", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    op.drop_column("candidate", "settled")
