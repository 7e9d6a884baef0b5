"""adjudications, gold labels and the resolved label's provenance

Revision ID: 0005_team
Revises: 0004_runs

A candidate's resolved label gets `label_source` (single / unanimous / majority / adjudicated), filled in
for existing candidates from their labels; a reviewer's decision lives in `adjudication`, and candidates
with a known label in `goldlabel`.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0005_team"
down_revision: str | Sequence[str] | None = "0004_runs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "adjudication",
        sa.Column("candidate_id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("human_check", sa.Integer(), nullable=False),
        sa.Column("difficulty_eval", sa.Integer(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotator.id"]),
        sa.ForeignKeyConstraint(["candidate_id"], ["candidate.id"]),
        sa.PrimaryKeyConstraint("candidate_id"),
    )
    op.create_table(
        "goldlabel",
        sa.Column("candidate_id", sa.Integer(), nullable=False),
        sa.Column("human_check", sa.Integer(), nullable=False),
        sa.Column("difficulty_eval", sa.Integer(), nullable=True),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["candidate_id"], ["candidate.id"]),
        sa.ForeignKeyConstraint(["created_by"], ["annotator.id"]),
        sa.PrimaryKeyConstraint("candidate_id"),
    )
    with op.batch_alter_table("candidate", schema=None) as batch_op:
        batch_op.add_column(sa.Column("label_source", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=True))
    # Existing resolved labels: one label is "single"; several that all say the same are "unanimous";
    # otherwise the stored label won a majority (a tie is unresolved and stays NULL).
    op.execute(
        """
        UPDATE candidate SET label_source = CASE
            WHEN human_check IS NULL THEN NULL
            WHEN label_count = 1 THEN 'single'
            WHEN (SELECT COUNT(DISTINCT CAST(a.human_check AS VARCHAR(4)) || ':'
                                        || CAST(COALESCE(a.difficulty_eval, -1) AS VARCHAR(4)))
                  FROM annotation a WHERE a.candidate_id = candidate.id) = 1 THEN 'unanimous'
            ELSE 'majority'
        END
        """
    )


def downgrade() -> None:
    with op.batch_alter_table("candidate", schema=None) as batch_op:
        batch_op.drop_column("label_source")
    op.drop_table("goldlabel")
    op.drop_table("adjudication")
