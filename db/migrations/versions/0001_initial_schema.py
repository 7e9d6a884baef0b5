"""initial schema

Revision ID: 0001
Revises: 
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

import annotator.database.models
from alembic import op


revision: str = '0001'
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('annotator',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
    sa.Column('role', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
    sa.Column('password_hash', sqlmodel.sql.sqltypes.AutoString(length=500), nullable=True),
    sa.Column('is_system', sa.Boolean(), nullable=False),
    sa.Column('is_active', sa.Boolean(), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('annotator', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_annotator_name'), ['name'], unique=True)

    op.create_table('problem',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('data_source', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('source_id', annotator.database.models.JSONText(), nullable=True),
    sa.Column('question', sa.Text(), nullable=False),
    sa.Column('ground_truth', annotator.database.models.JSONText(), nullable=True),
    sa.Column('solution', sa.Text(), nullable=True),
    sa.Column('extra', annotator.database.models.JSONText(), nullable=True),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('data_source', 'position')
    )
    op.create_table('setting',
    sa.Column('key', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
    sa.Column('value', annotator.database.models.JSONText(), nullable=True),
    sa.PrimaryKeyConstraint('key')
    )
    op.create_table('sourcefile',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('format', sqlmodel.sql.sqltypes.AutoString(length=50), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=500), nullable=False),
    sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(length=50), nullable=False),
    sa.Column('options', annotator.database.models.JSONText(), nullable=True),
    sa.Column('record_count', sa.Integer(), nullable=False),
    sa.Column('sha256', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('imported_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('format', 'name')
    )
    op.create_table('candidate',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('problem_id', sa.Integer(), nullable=False),
    sa.Column('data_id', sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
    sa.Column('data_source', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
    sa.Column('rewrite_type', sqlmodel.sql.sqltypes.AutoString(length=50), nullable=False),
    sa.Column('condition_index', sa.Integer(), nullable=True),
    sa.Column('extracted_condition', sa.Text(), nullable=True),
    sa.Column('rewritten_question', sa.Text(), nullable=False),
    sa.Column('rewritten_condition', sa.Text(), nullable=True),
    sa.Column('unsolvable_reason', sa.Text(), nullable=True),
    sa.Column('question', sa.Text(), nullable=True),
    sa.Column('ground_truth', annotator.database.models.JSONText(), nullable=True),
    sa.Column('llm_outputs', annotator.database.models.JSONText(), nullable=True),
    sa.Column('provenance', annotator.database.models.JSONText(), nullable=True),
    sa.Column('extra', annotator.database.models.JSONText(), nullable=True),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
    sa.Column('position', sa.Integer(), nullable=True),
    sa.Column('label_count', sa.Integer(), nullable=False),
    sa.Column('human_check', sa.Integer(), nullable=True),
    sa.Column('difficulty_eval', sa.Integer(), nullable=True),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('updated_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['problem_id'], ['problem.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('candidate', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_candidate_data_id'), ['data_id'], unique=True)
        batch_op.create_index(batch_op.f('ix_candidate_problem_id'), ['problem_id'], unique=False)
        batch_op.create_index('ix_candidate_queue', ['status', 'label_count', 'id'], unique=False)
        batch_op.create_index('ix_candidate_source_type', ['data_source', 'rewrite_type'], unique=False)

    op.create_table('annotation',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('candidate_id', sa.Integer(), nullable=False),
    sa.Column('annotator_id', sa.Integer(), nullable=False),
    sa.Column('human_check', sa.Integer(), nullable=False),
    sa.Column('difficulty_eval', sa.Integer(), nullable=True),
    sa.Column('comment', sa.Text(), nullable=True),
    sa.Column('seconds_spent', sa.Float(), nullable=True),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('updated_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['annotator_id'], ['annotator.id'], ),
    sa.ForeignKeyConstraint(['candidate_id'], ['candidate.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('candidate_id', 'annotator_id')
    )
    with op.batch_alter_table('annotation', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_annotation_annotator_id'), ['annotator_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_annotation_candidate_id'), ['candidate_id'], unique=False)

    op.create_table('annotationevent',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('candidate_id', sa.Integer(), nullable=False),
    sa.Column('annotator_id', sa.Integer(), nullable=False),
    sa.Column('action', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
    sa.Column('old', annotator.database.models.JSONText(), nullable=True),
    sa.Column('new', annotator.database.models.JSONText(), nullable=True),
    sa.Column('at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['annotator_id'], ['annotator.id'], ),
    sa.ForeignKeyConstraint(['candidate_id'], ['candidate.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('annotationevent', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_annotationevent_candidate_id'), ['candidate_id'], unique=False)

    # The label history is append-only: the database itself refuses to change or delete an event.
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION annotationevent_append_only() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'annotationevent is append-only'; END; $$ LANGUAGE plpgsql"
        )
        op.execute(
            "CREATE TRIGGER annotationevent_append_only BEFORE UPDATE OR DELETE ON annotationevent "
            "FOR EACH ROW EXECUTE FUNCTION annotationevent_append_only()"
        )
    else:
        for event in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER annotationevent_no_{event.lower()} BEFORE {event} ON annotationevent "
                "BEGIN SELECT RAISE(ABORT, 'annotationevent is append-only'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER annotationevent_append_only ON annotationevent")
        op.execute("DROP FUNCTION annotationevent_append_only()")
    else:
        op.execute("DROP TRIGGER annotationevent_no_update")
        op.execute("DROP TRIGGER annotationevent_no_delete")
    with op.batch_alter_table('annotationevent', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_annotationevent_candidate_id'))

    op.drop_table('annotationevent')
    with op.batch_alter_table('annotation', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_annotation_candidate_id'))
        batch_op.drop_index(batch_op.f('ix_annotation_annotator_id'))

    op.drop_table('annotation')
    with op.batch_alter_table('candidate', schema=None) as batch_op:
        batch_op.drop_index('ix_candidate_source_type')
        batch_op.drop_index('ix_candidate_queue')
        batch_op.drop_index(batch_op.f('ix_candidate_problem_id'))
        batch_op.drop_index(batch_op.f('ix_candidate_data_id'))

    op.drop_table('candidate')
    op.drop_table('sourcefile')
    op.drop_table('setting')
    op.drop_table('problem')
    with op.batch_alter_table('annotator', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_annotator_name'))

    op.drop_table('annotator')
