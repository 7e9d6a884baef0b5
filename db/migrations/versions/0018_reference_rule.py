"""the reference rule: a transcript's `rules_disagree` becomes `differs_from_reference`

Revision ID: 0018_reference_rule
Revises: 0017_run_parts

The judge's rule sets are a list with one reference rule (`annotator.transcripts.judge.rule_sets.registry`), and a
transcript says whether its verdict differs from the reference rule's (judged by the reference rule: whether
another rule set's does). Of the rule sets `reliablemath` (the reference) and `reliablemath-exact` that is what
`rules_disagree` says, so the column is renamed with its values. The review queue's index (`ix_transcript_review`)
is built over expressions that name the column: it is built again over the new name. SQLite (3.25 on) and
PostgreSQL both rename a column in place (`ALTER TABLE ... RENAME COLUMN`), so no batch copy of the table is needed.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018_reference_rule"
down_revision: str | Sequence[str] | None = "0017_run_parts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The review queue's expressions (`light_tables.QUEUE_PART`, `QUEUE_WITHIN`) over either name of the column.
_STEP = "(CAST(id AS BIGINT) * 48271 % 2147483647)"
_RANK = f"(({_STEP} * {_STEP} % 2147483647) * 16807 + {_STEP}) % 2147483647"


def _review_index(column: str) -> str:
    part = (f"(CASE WHEN human IS NULL THEN 0 ELSE 3 END + CASE WHEN {column} THEN 0 "
            "WHEN judge IS NULL OR judge_class = 'unmatched' THEN 1 ELSE 2 END)")
    within = f"(CASE WHEN {column} THEN id WHEN judge IS NULL OR judge_class = 'unmatched' THEN id ELSE {_RANK} END)"
    return f"CREATE INDEX ix_transcript_review ON transcript ({part}, {within}, id)"


def _rename(old: str, new: str) -> None:
    op.execute("DROP INDEX ix_transcript_review")
    op.alter_column("transcript", old, new_column_name=new, existing_type=sa.Boolean(), existing_nullable=True)
    op.execute(_review_index(new))


def upgrade() -> None:
    _rename("rules_disagree", "differs_from_reference")


def downgrade() -> None:
    _rename("differs_from_reference", "rules_disagree")
