"""`annotator.database.light_tables`: the lightweight tables a Core-only read names, against the schema
(`annotator.database.models`)."""

from __future__ import annotations

from sqlmodel import SQLModel

import annotator.database.models  # noqa: F401  (registers the tables in SQLModel's metadata)
from annotator.database.light_tables import QUEUE_PART, REVIEWED, SEVERAL_SAMPLES, TABLES


def test_every_column_a_light_table_names_is_one_of_the_models_table() -> None:
    for light in TABLES:
        schema = SQLModel.metadata.tables[light.name]
        assert set(light.c.keys()) <= set(schema.c.keys()), light.name


def test_the_transcripts_indexes_are_built_over_the_expressions_here() -> None:
    """The report's reads lean on these indexes (`counting`): an expression changed here changes the index too."""
    indexes = {index.name: index for index in SQLModel.metadata.tables["transcript"].indexes}
    assert str(indexes["ix_transcript_review"].expressions[0]) == QUEUE_PART
    assert str(indexes["ix_transcript_reviewed"].dialect_options["sqlite"]["where"]) == REVIEWED
    assert str(indexes["ix_transcript_samples"].dialect_options["postgresql"]["where"]) == SEVERAL_SAMPLES
