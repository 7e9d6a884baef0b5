"""imported labels: each candidate's count of labels that came with an import or a pipeline

Revision ID: 0021_imported_labels
Revises: 0018_reference_rule

Whether the labels of system annotators (an import such as the release's own "import:reliablemath", or a
pipeline) fill a candidate's `labels_per_candidate` slots is a project setting (`imported_labels_count`). The label
writer keeps their number beside `label_count` (`candidate.imported_label_count`), backfilled here in one statement;
the Overview's index of the columns it counts by (`ix_candidate_state`) takes the new column, so that it still
counts off the index alone.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_imported_labels"
down_revision: str | Sequence[str] | None = "0020_audit"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As 0014 built it; the upgrade appends the new column.
STATE_COLUMNS = ["data_source", "rewrite_type", "status", "label_source", "label_count", "human_check",
                 "difficulty_eval"]
BACKFILL = """
UPDATE candidate SET imported_label_count = (
    SELECT COUNT(*) FROM annotation JOIN annotator ON annotator.id = annotation.annotator_id
    WHERE annotation.candidate_id = candidate.id AND annotator.is_system
)
WHERE EXISTS (
    SELECT 1 FROM annotation JOIN annotator ON annotator.id = annotation.annotator_id
    WHERE annotation.candidate_id = candidate.id AND annotator.is_system
)
"""


def upgrade() -> None:
    op.add_column("candidate", sa.Column("imported_label_count", sa.Integer(), nullable=False, server_default="0"))
    op.execute(BACKFILL)
    op.drop_index("ix_candidate_state", table_name="candidate")
    op.create_index("ix_candidate_state", "candidate", [*STATE_COLUMNS, "imported_label_count"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_candidate_state", table_name="candidate")
    # In place on both (SQLite 3.35 on): a batch copy of the table would lose the indexes over expressions.
    op.drop_column("candidate", "imported_label_count")
    op.create_index("ix_candidate_state", "candidate", STATE_COLUMNS, unique=False)
