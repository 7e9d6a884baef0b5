"""audit: a random sample of the vetted candidates and each one's re-check

Revision ID: 0020_audit
Revises: 0018_reference_rule

A reviewer re-checks a seeded sample of the vetted set, drawn stratified by data source
(`annotator.labelling.audit`): `auditsample` keeps who drew it, when, the seed and the size, `audititem` each sampled
candidate with its stratum, its place in the queue and the reviewer's decision (truly unsolvable or not).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0020_audit"
down_revision: str | Sequence[str] | None = "0019_adaptive_overlap"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "auditsample",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("vetted", sa.Integer(), nullable=False),
        sa.Column("drawn_by", sa.Integer(), nullable=False),
        sa.Column("drawn_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["drawn_by"], ["annotator.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "audititem",
        sa.Column("sample_id", sa.Integer(), nullable=False),
        sa.Column("candidate_id", sa.Integer(), nullable=False),
        sa.Column("data_source", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("unsolvable", sa.Integer(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("audited_by", sa.Integer(), nullable=True),
        sa.Column("audited_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["audited_by"], ["annotator.id"]),
        sa.ForeignKeyConstraint(["candidate_id"], ["candidate.id"]),
        sa.ForeignKeyConstraint(["sample_id"], ["auditsample.id"]),
        sa.PrimaryKeyConstraint("sample_id", "candidate_id"),
    )


def downgrade() -> None:
    op.drop_table("audititem")
    op.drop_table("auditsample")
