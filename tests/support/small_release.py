"""A tiny ReliableMath release: solvable problems and their rewrites."""

from __future__ import annotations

SOLVE = [
    {"data_source": "aime", "id": 0, "question": "Find $x$ if $x + 1 = 3$.", "ground_truth": "2", "solution": "$x=2$"},
    {"data_source": "aime", "id": 7, "question": "Find $y$ if $2y = 8$.", "ground_truth": "4"},
    {"data_source": "amc", "id": 3, "question": "What is $3 \\cdot 4$?", "ground_truth": 12.0},
]


UNSOL = [
    {
        "data_id": "aime_0_remove_1",
        "question": SOLVE[0]["question"],
        "rewritten_question": "Find $x$.",
        "ground_truth": "2",
        "difficulty_eval": 0,
    },
    {
        "data_id": "aime_1_contradict_1",
        "question": SOLVE[1]["question"],
        "rewritten_question": "Find $y$ if $2y = 8$ and $y = 5$.",
        "ground_truth": "4",
        "difficulty_eval": 1.0,
    },
]
