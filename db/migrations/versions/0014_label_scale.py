"""label scale: each candidate's agreement and an index of the open disputes; trigram indexes for Browse's search

Revision ID: 0014_label_scale
Revises: 0012_judgements

At a million candidates Adjudicate grouped every label twice to find the lowest agreement. The share of a
candidate's labels equal to the most common one (`candidate.agreement`) is now stored with its resolved label
by the one label writer, backfilled here in one statement, and the open disputes (agreement below 1, no
reviewer's decision) are a partial index in Adjudicate's order. The Overview counts the candidates off an
index of the columns it groups by. On PostgreSQL Browse's search
(`lower(column) LIKE '%...%'`) gets trigram GIN indexes (`pg_trgm`, when the server has it); SQLite is unchanged.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_label_scale"
down_revision: str | Sequence[str] | None = "0012_judgements"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As `annotator.database.models.OPEN_DISPUTE` says it today (a migration keeps its own copy).
OPEN_DISPUTE = "agreement < 1 AND (label_source IS NULL OR label_source <> 'adjudicated')"
# What the Overview counts by (`annotator.figures.stats`): an index it reads alone, not the table with its texts.
STATE_COLUMNS = ["data_source", "rewrite_type", "status", "label_source", "label_count", "human_check",
                 "difficulty_eval"]
SEARCHED = ("data_id", "rewritten_question", "rewritten_condition")  # Browse's search

# The labels' most common one counted per candidate: codes human_check * 3 + difficulty_eval (2 for none), of
# which the label writer stores 2, 3 and 4 (as `annotator.labelling._label_writer._resolved_labels` does).
BACKFILL = """
UPDATE candidate SET agreement = CAST(counts.modal AS DOUBLE PRECISION) / counts.n
FROM (
    SELECT candidate_id, n, CASE WHEN c2 >= c3 AND c2 >= c4 THEN c2 WHEN c3 >= c4 THEN c3 ELSE c4 END AS modal
    FROM (
        SELECT candidate_id, COUNT(*) AS n,
               SUM(CASE WHEN human_check = 0 AND difficulty_eval IS NULL THEN 1 ELSE 0 END) AS c2,
               SUM(CASE WHEN human_check = 1 AND difficulty_eval = 0 THEN 1 ELSE 0 END) AS c3,
               SUM(CASE WHEN human_check = 1 AND difficulty_eval = 1 THEN 1 ELSE 0 END) AS c4
        FROM annotation GROUP BY candidate_id
    ) AS per_label
) AS counts
WHERE candidate.id = counts.candidate_id
"""


def _trigram_indexes() -> None:
    """GIN trigram indexes for `lower(column) LIKE '%...%'`, when the server has `pg_trgm` (a trusted
    extension since PostgreSQL 13: the database's owner may create it); without it the search stays a scan."""
    bind = op.get_bind()
    available = bind.execute(sa.text("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")).first()
    if available is None:
        return
    with bind.begin_nested():
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for column in SEARCHED:
        op.execute(f"CREATE INDEX IF NOT EXISTS ix_candidate_{column}_trgm ON candidate "
                   f"USING gin (lower({column}) gin_trgm_ops)")


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    if postgres:  # one grouping of every label and one pass over the candidates: room to do both in memory
        op.execute("SET LOCAL work_mem = '256MB'")
        op.execute("SET LOCAL maintenance_work_mem = '512MB'")
    with op.batch_alter_table("candidate", schema=None) as batch_op:
        batch_op.add_column(sa.Column("agreement", sa.Float(), nullable=True))
    op.execute(BACKFILL)
    op.create_index("ix_candidate_dispute", "candidate", ["agreement", sa.text("(human_check IS NOT NULL)"), "id"],
                    unique=False, sqlite_where=sa.text(OPEN_DISPUTE), postgresql_where=sa.text(OPEN_DISPUTE))
    op.create_index("ix_candidate_state", "candidate", STATE_COLUMNS, unique=False)
    if postgres:
        _trigram_indexes()


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for column in SEARCHED:
            op.execute(f"DROP INDEX IF EXISTS ix_candidate_{column}_trgm")
    op.drop_index("ix_candidate_state", table_name="candidate")
    op.drop_index("ix_candidate_dispute", table_name="candidate")
    with op.batch_alter_table("candidate", schema=None) as batch_op:
        batch_op.drop_column("agreement")
