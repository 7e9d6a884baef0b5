"""GSM-IC records to import: the dataset's own rows and the original problems they distract from."""

from __future__ import annotations

import json
from pathlib import Path

ORIGINAL = (
    "Kim plants 80 cherry pits. 25% of them sprout and Kim sells 6 of the saplings. "
    "How many cherry saplings does she have left?"
)


OWN_ROWS = [
    {
        "original_question": ORIGINAL,
        "new_question": ORIGINAL.replace(
            "saplings. How", "saplings. Kim's mother plants 20 more potatoes. How"
        ).replace("does she", "does Kim"),
        "answer": "14",
        "n_steps": 2,
        "role": "Kim's mother",
        "number": "20",
        "sentence_template": "{role} plants {number} more potatoes.",
        "role_label": "overlapped",
        "number_label": "in_range",
        "sentence_label": "in_topic",
    },
    {
        "original_question": ORIGINAL,
        "new_question": ORIGINAL.replace("saplings. How", "saplings. Emma is 1,000 years old. How"),
        "answer": "14",
        "n_steps": 2,
        "role": "Emma",
        "number": "1,000",
        "sentence_template": "{role} is {number} years old.",
        "role_label": "nonoverlapped",
        "number_label": "out_range",
        "sentence_label": "out_topic",
    },
]


def real_rows(shared_data: Path) -> list[dict]:
    """The GSM-IC rows quoted verbatim in the shared data, those with every field."""
    quoted = json.loads(
        (shared_data / "gsm_ic" / "verbatim_rows_quoted_by_thirdparty.json").read_text(encoding="utf-8")
    )
    rows = [r for key, value in quoted.items() if key.startswith("split_") for r in value]
    return [r for r in rows if {"original_question", "new_question", "answer"} <= set(r)]
