"""label index: a label's candidate is looked up through the unique key (candidate_id, annotator_id)

Revision ID: 0027_label_index
Revises: 0026_label_days

The annotation table's index on candidate_id alone repeated the leading column of its unique key, which serves the
same lookups; every label written kept both up to date. Only the index goes: no row changes.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0027_label_index"
down_revision: str | Sequence[str] | None = "0026_label_days"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_annotation_candidate_id", table_name="annotation")


def downgrade() -> None:
    op.create_index("ix_annotation_candidate_id", "annotation", ["candidate_id"])
