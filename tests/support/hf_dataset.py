"""For the `hf` export's tests: a small release whose columns take every type (text, whole numbers some written as
`1.0`, numbers, lists of text, a field on some rows only), the card's front matter, and the folder loaded by
Hugging Face `datasets` in a fresh interpreter, offline, with its cache under the test's own directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.support.imports import PROJECT_ROOT

SOLVE = [
    {"data_source": "aime", "id": 3, "question": "Find $x$ if $x + 1 = 3$.", "ground_truth": "2",
     "solution": "$x = 2$"},
    {"data_source": "aime", "id": 9, "question": "Find $y$ if $2y = 8$.", "ground_truth": "4", "solution": "$y=4$"},
    {"data_source": "amc", "id": 1, "question": "What is $3 \\cdot 4$?", "ground_truth": 12.0},
    {"data_source": "minerva", "id": 0, "question": "Give the speed in m/s.", "ground_truth": ["9.6\n"]},
]
UNSOL = [
    {"data_id": "aime_0_remove_1", "question": SOLVE[0]["question"], "rewritten_question": "Find $x$.",
     "ground_truth": "2", "difficulty_eval": 0},
    {"data_id": "aime_1_contradict_1", "question": SOLVE[1]["question"],
     "rewritten_question": "Find $y$ if $2y = 8$ and $y = 5$.", "ground_truth": "4", "difficulty_eval": 1.0},
    {"data_id": "amc_0_remove_1", "question": SOLVE[2]["question"], "rewritten_question": "What is $3 \\cdot n$?",
     "ground_truth": 12, "difficulty_eval": 1.0},
    {"data_id": "minerva_0_remove_1", "question": SOLVE[3]["question"], "rewritten_question": "Give the speed.",
     "ground_truth": "9.6", "difficulty_eval": 0},
]


def write_release(folder: Path) -> Path:
    """The release's `solve.json` and `unsol.json` in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "solve.json").write_text(json.dumps(SOLVE, indent=4), encoding="utf-8")
    (folder / "unsol.json").write_text(json.dumps(UNSOL, indent=4), encoding="utf-8")
    return folder


def front_matter(card: str) -> dict[str, Any]:
    """The card's YAML front matter, parsed (the card starts with it, between two `---` lines)."""
    assert card.startswith("---\n"), card[:40]
    head, _, _ = card[4:].partition("\n---\n")
    parsed: dict[str, Any] = yaml.safe_load(head)
    return parsed


_LOADER = """
import json, sys
import datasets
folder, names = sys.argv[1], json.loads(sys.argv[2])
found = {}
for name in names:
    loaded = datasets.load_dataset(folder, name)
    (split,) = loaded
    found[name] = {"split": split, "rows": loaded[split].to_list(),
                   "features": {key: str(value) for key, value in loaded[split].features.items()}}
default = datasets.load_dataset(folder)
found[""] = {"split": list(default)[0], "rows": default[list(default)[0]].to_list()}
print(json.dumps(found))
"""


def load_with_datasets(folder: Path, configs: list[str], cache: Path) -> dict[str, Any]:
    """{config: {split, rows, features}} as `datasets.load_dataset(folder, config)` gives them, and under "" the
    folder loaded without a config name (its default one)."""
    environment = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(cache),
                   "HF_DATASETS_CACHE": str(cache / "datasets"), "HF_HUB_DISABLE_TELEMETRY": "1"}
    result = subprocess.run([sys.executable, "-c", _LOADER, str(folder), json.dumps(configs)], cwd=PROJECT_ROOT,
                            env=environment, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    loaded: dict[str, Any] = json.loads(result.stdout)
    return loaded
