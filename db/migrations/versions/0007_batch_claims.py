"""batches: a claim remembers the Excel batch that handed the candidate out (None for the browser queue)

Revision ID: 0007_issue_11b
Revises: 0006_transcripts
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

# The id keeps its first name: databases made before the file was renamed record it in alembic_version.
revision: str = "0007_issue_11b"
down_revision: str | Sequence[str] | None = "0006_transcripts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("candidateclaim", schema=None) as batch_op:
        batch_op.add_column(sa.Column("batch", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("candidateclaim", schema=None) as batch_op:
        batch_op.drop_column("batch")
