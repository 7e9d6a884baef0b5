"""label days: each annotator's labels and seconds per day, kept by triggers on the labels

Revision ID: 0026_label_days
Revises: 0025_dispute_claims

Team's counts (labels, time spent, labels per day) are read from `labelday` instead of a GROUP BY over every label.
Triggers on `annotation` append a row of changes for each (annotator, day) a write touches, whoever writes: the app,
an import's COPY, a script or SQL by hand. The rows are changes, never one row updated in place, so two writers
never wait for each other; `annotator.labelling.label_days` sums them and folds them together now and then. On
PostgreSQL the triggers run once per statement over its rows (transition tables), on SQLite once per row. A day is
the label's `created_at` date in UTC on both. The upgrade counts the existing labels into it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026_label_days"
down_revision: str | Sequence[str] | None = "0025_dispute_claims"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PG_DAY = "(created_at AT TIME ZONE 'UTC')::date"
# PostgreSQL: one function per kind of statement, each appending one row per (annotator, day) of the statement's rows.
_PG_CHANGES = {
    "insert": ("REFERENCING NEW TABLE AS new_rows",
               f"SELECT annotator_id, {_PG_DAY}, count(*), coalesce(sum(seconds_spent), 0) FROM new_rows "
               "GROUP BY 1, 2"),
    "delete": ("REFERENCING OLD TABLE AS old_rows",
               f"SELECT annotator_id, {_PG_DAY}, -count(*), -coalesce(sum(seconds_spent), 0) FROM old_rows "
               "GROUP BY 1, 2"),
    # A changed label moves from its old (annotator, day, seconds) to its new ones; nothing when those stayed.
    "update": ("REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
               "SELECT annotator_id, day, sum(labels), sum(seconds) FROM ("
               f"SELECT annotator_id, {_PG_DAY} AS day, -1 AS labels, -coalesce(seconds_spent, 0) AS seconds "
               "FROM old_rows UNION ALL "
               f"SELECT annotator_id, {_PG_DAY}, 1, coalesce(seconds_spent, 0) FROM new_rows) AS moved "
               "GROUP BY 1, 2 HAVING sum(labels) <> 0 OR sum(seconds) <> 0"),
}
_SQLITE_DAY = "date({row}.created_at)"
_SQLITE_ROW = "INSERT INTO labelday (annotator_id, day, labels, seconds) VALUES ({row}.annotator_id, {day}, {sign}1, " \
              "{sign}coalesce({row}.seconds_spent, 0));"
_SQLITE_TRIGGERS = {
    "insert": ("AFTER INSERT ON annotation", _SQLITE_ROW.format(row="NEW", day=_SQLITE_DAY.format(row="NEW"), sign="")),
    "delete": ("AFTER DELETE ON annotation", _SQLITE_ROW.format(row="OLD", day=_SQLITE_DAY.format(row="OLD"), sign="-")),
    "update": ("AFTER UPDATE OF annotator_id, created_at, seconds_spent ON annotation WHEN "
               "OLD.annotator_id IS NOT NEW.annotator_id OR date(OLD.created_at) IS NOT date(NEW.created_at) "
               "OR OLD.seconds_spent IS NOT NEW.seconds_spent",
               _SQLITE_ROW.format(row="OLD", day=_SQLITE_DAY.format(row="OLD"), sign="-")
               + _SQLITE_ROW.format(row="NEW", day=_SQLITE_DAY.format(row="NEW"), sign="")),
}


def upgrade() -> None:
    op.create_table(
        "labelday",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("labels", sa.Integer(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
    )
    postgres = op.get_bind().dialect.name == "postgresql"
    # The triggers first: creating them waits for the labels' writers and holds the next ones until the commit, so
    # the count below and the triggers' rows after it add up to every label exactly once.
    if postgres:
        for kind, (referencing, changes) in _PG_CHANGES.items():
            op.execute(f"CREATE FUNCTION labelday_{kind}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                       f"INSERT INTO labelday (annotator_id, day, labels, seconds) {changes}; RETURN NULL; END $$")
            op.execute(f"CREATE TRIGGER labelday_{kind} AFTER {kind.upper()} ON annotation {referencing} "
                       f"FOR EACH STATEMENT EXECUTE FUNCTION labelday_{kind}()")
            # Also in replica mode, which a bulk load may take to skip the foreign keys' checks (bench/scale_data.py).
            op.execute(f"ALTER TABLE annotation ENABLE ALWAYS TRIGGER labelday_{kind}")
        # TRUNCATE runs no DELETE trigger: it empties the counts too.
        op.execute("CREATE FUNCTION labelday_truncate() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                   "DELETE FROM labelday; RETURN NULL; END $$")
        op.execute("CREATE TRIGGER labelday_truncate AFTER TRUNCATE ON annotation "
                   "FOR EACH STATEMENT EXECUTE FUNCTION labelday_truncate()")
        op.execute("ALTER TABLE annotation ENABLE ALWAYS TRIGGER labelday_truncate")
    else:
        for kind, (when, body) in _SQLITE_TRIGGERS.items():
            op.execute(f"CREATE TRIGGER labelday_{kind} {when} BEGIN {body} END")
    day = _PG_DAY if postgres else "date(created_at)"
    op.execute(f"INSERT INTO labelday (annotator_id, day, labels, seconds) SELECT annotator_id, {day}, count(*), "
               "coalesce(sum(seconds_spent), 0) FROM annotation GROUP BY 1, 2")


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for kind in [*_PG_CHANGES, "truncate"] if postgres else _SQLITE_TRIGGERS:
        op.execute(f"DROP TRIGGER labelday_{kind}" + (" ON annotation" if postgres else ""))
        if postgres:
            op.execute(f"DROP FUNCTION labelday_{kind}()")
    op.drop_table("labelday")
