"""UMWP records to import: typical ones and quirky ones, and writing them as JSON lines."""

from __future__ import annotations

import json
from pathlib import Path

RECORDS = [
    {
        "id": 1,
        "question": "Tom has 3 apples and buys 4 more. How many apples does he have?",
        "answer": [7.0],
        "answerable": True,
        "category": None,
        "relevant_ids": None,
        "source": "SVAMP",
    },
    {
        "id": 2,
        "question": "Tom has some apples and buys 4 more. How many apples does he have?",
        "answer": None,
        "answerable": False,
        "category": 1,
        "relevant_ids": [1],
        "source": "SVAMP",
    },
    {
        "id": 3,
        "question": "A train goes 60 km/h for 2.5 hours. How far does it go?",
        "answer": [150.0],
        "answerable": True,
        "category": None,
        "relevant_ids": None,
        "source": "GSM8K",
    },
    {
        "id": 4,
        "question": "Tom has 3 apples and buys 4 more. How many pears does Mary have?",
        "answer": None,
        "answerable": False,
        "category": 4,
        "relevant_ids": [1],
        "source": "SVAMP",
    },
    {
        "id": 5,
        "question": "A train goes 60 km/h for 2.5 hours.",
        "answer": None,
        "answerable": False,
        "category": 5,
        "relevant_ids": [3, 1],
        "source": "GSM8K",
    },
    {
        "id": 6,
        "question": "Tom has 3 apples and buys -4 more. How many apples does he have?",
        "answer": None,
        "answerable": False,
        "category": 3,
        "relevant_ids": [1],
        "source": "SVAMP",
    },
    {
        "id": 7,
        "question": "Tom has 3 apples and buys 4 more. Or 5. How many apples does he have?",
        "answer": None,
        "answerable": False,
        "category": 2,
        "relevant_ids": [1],
        "source": "SVAMP",
    },
    {
        "id": 8,
        "question": "Ann had 12 cookies and ate 5. How many are left?",
        "answer": [7],
        "answerable": True,
        "category": None,
        "relevant_ids": None,
        "source": "MultiArith",
    },
    {
        "id": 9,
        "question": "Ann had 12 cookies and ate 5, then 2 more, in two days.",
        "answer": None,
        "answerable": False,
        "category": 5,
        "relevant_ids": [8],
        "source": "ASDiv",
    },
]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# The real UMWP StandardDataset.jsonl's quirk: a few unanswerable records carry a bare number in
# `answer` where the others have null (the first on line 2713: `"answer": 2`). Plus other values a real file
# may hold in its data fields: an answer that is not a list of numbers, a source outside the four, a missing key.
QUIRKY = [
    *RECORDS[:2],
    {**RECORDS[3], "answer": 2},
    {**RECORDS[2], "answer": "150 km", "source": "MAWPS"},
    {key: value for key, value in RECORDS[4].items() if key != "source"},
    {**RECORDS[5], "answer": 2.5},
    *RECORDS[6:],
]
