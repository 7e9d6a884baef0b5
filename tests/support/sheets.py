"""Labelling sheets: the check columns and rows as a sheet holds them."""

from __future__ import annotations

CHECK = [
    {
        "data_source": "math",
        "id": 11,
        "question": "If $a = 2$ and $b = 3$, what is $a^b$?",
        "ground_truth": "8",
        "remove_question_1": {
            "remove_question": "If $b = 3$, what is $a^b$?",
            "rewritten_condition": "$a = 2$",
            "unsolvable_reason": "a is unknown",
        },
        "contradict_question_1": {
            "contradict_question": "If $a = 2$, $a = 5$ and $b = 3$, what is $a^b$?",
            "rewritten_condition": "$a = 5$",
            "unsolvable_reason": "a has two values",
            "analysis": "the model's analysis",
            "human_check": 0,
        },
    },
    {
        "data_source": "math",
        "id": 12,
        "question": "What is $10 / d$ when $d = 5$?",
        "ground_truth": "2",
        "remove_question_1": {
            "remove_question": "What is $10 / d$?",
            "rewritten_condition": "$d = 5$",
            "unsolvable_reason": "d is unknown",
            "human_check": 1,
            "difficulty_eval": 1,
        },
    },
]


def sheet_rows() -> list[dict[str, object]]:
    return [
        {
            "unsol_id": "gsm_4_remove_1",
            "data_source": "gsm",
            "question": "Tom has 3 apples and buys 4 more. How many?",
            "ground_truth": "7",
            "rewritten_condition": "buys 4 more",
            "rewritten_question": "Tom has 3 apples and buys some more. How many?",
            "unsolvable_reason": "how many he buys is unknown",
            "human_check": 1,
            "difficulty_eval": 0,
        },
        {
            "unsol_id": "gsm_4_contradict_1",
            "data_source": "gsm",
            "question": "Tom has 3 apples and buys 4 more. How many?",
            "ground_truth": "7",
            "rewritten_condition": "has 3 and has 5",
            "rewritten_question": "Tom has 3 apples, has 5 apples, and buys 4 more. How many?",
            "unsolvable_reason": "contradiction",
            "human_check": "",
            "difficulty_eval": "",
        },
    ]
