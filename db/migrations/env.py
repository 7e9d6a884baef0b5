"""Alembic environment: migrations run on the engine the application passes in, or on
`ANNOTATOR_DATABASE_URL` when run through the `alembic` command."""

from alembic import context
from sqlalchemy import create_engine, text
from sqlmodel import SQLModel

import annotator.database.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from annotator.database.engine import database_url

target_metadata = SQLModel.metadata
# The advisory lock every process upgrading a PostgreSQL database takes first (any constant of our own).
UPGRADE_LOCK = 0x616E6E6F  # "anno"


def run_migrations_online() -> None:
    engine = context.config.attributes.get("engine") or create_engine(database_url())
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            # A batch migration copies a table and drops the old one, which foreign keys that point at it
            # would refuse; SQLite only lets the setting change outside a transaction, i.e. on the driver's
            # connection before SQLAlchemy begins one.
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=sqlite,
        )
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                # Several app servers and workers of a new version may start at once: one upgrades, the others
                # wait here until it commits, then find the schema at its head (read after the lock) and do nothing.
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": UPGRADE_LOCK})
            context.run_migrations()
        connection.commit()
        if sqlite:  # the pooled connection goes back to the application
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=ON")


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported; run them against a database")
run_migrations_online()
