"""Column types and helpers every table module uses: JSON kept as text, long text, the time now."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Column, Text
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field


def utcnow() -> datetime:
    return datetime.now(UTC)


class JSONText(TypeDecorator[Any]):
    """JSON kept as text, byte for byte.

    SQLite gives a JSON column numeric affinity, which turns the stored text `142.0` into the integer 142;
    a TEXT column keeps it, so a float ground truth stays a float on every backend.
    """

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else json.dumps(value, ensure_ascii=False)

    def process_result_value(self, value: str | None, dialect: Any) -> Any:
        return None if value is None else json.loads(value)


def json_column(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(JSONText, nullable=nullable))


def text_column(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(Text, nullable=nullable))
