"""How the importer compares a record with what is stored: the candidate's fields it writes, type-aware equality,
and the fields of a record that differ from its stored candidate (`importer`, its only user)."""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring
from operator import attrgetter, is_
from typing import Any, NamedTuple

from annotator.database.models import Candidate, JSONText
from annotator.import_export.records import CandidateRecord

CANDIDATE_FIELDS = (
    "rewrite_type", "condition_index", "rewritten_question", "rewritten_condition", "unsolvable_reason",
    "extracted_condition", "question", "ground_truth", "llm_outputs", "provenance", "extra",
)


def same(a: Any, b: Any) -> bool:
    # Type-aware: "204", 204 and 204.0 are different ground truths. Text and whole numbers of one type compare
    # directly (most fields, and far cheaper); anything else by its JSON.
    if type(a) is type(b) and type(a) in (str, int):
        return bool(a == b)
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


# The candidate's fields stored as JSON text (`JSONText`): read raw, compared as text first.
JSON_FIELDS = frozenset(name for name in CANDIDATE_FIELDS if isinstance(Candidate.__table__.c[name].type, JSONText))
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode  # as `JSONText` writes
_ENCODE_TEXT = encode_basestring  # what that encoder writes for a str


class Given(NamedTuple):
    """The candidate fields a chunk's records give: their names, the JSON ones' places among them, and a record's
    values of them as a tuple."""

    names: list[str]
    json_at: list[int]
    values: Callable[[CandidateRecord], tuple[Any, ...]]

    @classmethod
    def of(cls, names: list[str]) -> Given:
        get = attrgetter(*names)  # one name's value alone, several as a tuple
        json_at = [index for index, name in enumerate(names) if name in JSON_FIELDS]
        return cls(names, json_at, get if len(names) > 1 else lambda record: (get(record),))


def differing_fields(given: Given, stored: tuple[Any, ...], record: CandidateRecord) -> list[str]:
    """The fields the record gives whose value differs from the stored one. `stored` holds the given fields as the
    driver returns them: a JSON field is its text, the same when the value would be written as that very text
    (decoded only when it would not: a number written otherwise, keys reordered)."""
    # Most records of a re-import are stored as they are: all fields at once first, each of the same type and
    # equal (a JSON field as the text it would be written as); one by one only when not.
    values = given.values(record)
    if given.json_at:
        encoded = list(values)
        for index in given.json_at:
            if (value := encoded[index]) is not None:
                # Text as the encoder writes it, without its call per value (most JSON fields hold text).
                encoded[index] = _ENCODE_TEXT(value) if type(value) is str else _ENCODE(value)
        values = tuple(encoded)
    if values == stored and all(map(is_, map(type, values), map(type, stored))):
        return []
    found = []
    for name, held in zip(given.names, stored, strict=True):
        if (value := getattr(record, name)) is None:
            continue
        if name in JSON_FIELDS:
            equal = held is not None and (held == _ENCODE(value) or same(json.loads(held), value))
        else:
            equal = (type(held) is type(value) and held == value) or same(held, value)
        if not equal:
            found.append(name)
    return found
