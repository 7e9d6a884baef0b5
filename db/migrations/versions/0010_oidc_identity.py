"""sign-in through an identity provider: an account's OpenID Connect e-mail address or subject

Revision ID: 0010_oidc_identity
Revises: 0009_sign_in_throttle

Two nullable columns on `annotator`, each with a unique index: the e-mail address (kept lower-case) and the
provider's subject an admin gave the account (`python -m annotator user add --oidc EMAIL`). Existing accounts get
neither, so nothing changes for them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0010_oidc_identity"
down_revision: str | Sequence[str] | None = "0009_sign_in_throttle"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("annotator", schema=None) as batch_op:
        batch_op.add_column(sa.Column("oidc_email", sqlmodel.sql.sqltypes.AutoString(length=320), nullable=True))
        batch_op.add_column(sa.Column("oidc_subject", sqlmodel.sql.sqltypes.AutoString(length=255), nullable=True))
        batch_op.create_index(batch_op.f("ix_annotator_oidc_email"), ["oidc_email"], unique=True)
        batch_op.create_index(batch_op.f("ix_annotator_oidc_subject"), ["oidc_subject"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("annotator", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_annotator_oidc_subject"))
        batch_op.drop_index(batch_op.f("ix_annotator_oidc_email"))
        batch_op.drop_column("oidc_subject")
        batch_op.drop_column("oidc_email")
