"""Reading our own CSV back (issue 17, item 3): the `table` reader removes exactly the `'` the CSV exports put
before text a spreadsheet would run, so every text comes back as it was, including text that really starts
with `'=`. (The writers' side: tests/import_export/exports/test_formula_injection.py; the cells:
tests/_util/test_csv_cells.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from annotator._util.csv_cells import TRIGGERS, DictWriter
from annotator.import_export.formats import ReadOptions, read
from annotator.import_export.records import CandidateRecord

FIELDS = ["unsol_id", "data_source", "question", "ground_truth_json", "rewritten_condition", "rewritten_question",
          "unsolvable_reason", "human_check", "difficulty_eval"]
# Text a reader keeps as given: not blank (an empty cell means "no value"), mostly made of the characters that
# matter here.
TEXT = st.text(alphabet=st.one_of(st.sampled_from([*TRIGGERS, "'", "'", "=", "-", "1"]), st.characters(
    codec="utf-8", exclude_categories=("Cs",))), min_size=1).filter(lambda text: text.strip() != "")


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def _row(index: int, question: str, rewritten: str, condition: str, reason: str, truth: object) -> dict[str, object]:
    return {"unsol_id": f"gsm_{index}_remove_1", "data_source": "gsm", "question": question,
            "ground_truth_json": json.dumps(truth, ensure_ascii=False), "rewritten_condition": condition,
            "rewritten_question": rewritten, "unsolvable_reason": reason, "human_check": 1, "difficulty_eval": 0}


def _candidates(path: Path) -> list[CandidateRecord]:
    (part,) = read(path, format="table", options=ReadOptions())
    return [record for record in part.records if isinstance(record, CandidateRecord)]


@settings(max_examples=60)
@given(st.lists(st.tuples(TEXT, TEXT, TEXT, TEXT, st.one_of(TEXT, st.integers(), st.floats(allow_nan=False,
                                                                                           allow_infinity=False))),
                min_size=1, max_size=4))
@example([("'=1+1", "=HYPERLINK(\"http://x\")", "''@a", "-2+3", -5)])
def test_our_csv_reads_back_to_the_exact_text(tmp_path_factory: pytest.TempPathFactory,
                                              rows: list[tuple[str, str, str, str, object]]) -> None:
    path = _write(tmp_path_factory.mktemp("sheet") / "sheet.csv",
                  [_row(index, *values) for index, values in enumerate(rows)])
    found = _candidates(path)
    assert [(c.question, c.rewritten_question, c.rewritten_condition, c.unsolvable_reason, c.ground_truth)
            for c in found] == rows
    assert [c.label.human_check for c in found if c.label] == [1] * len(rows)


def test_a_hand_written_csv_loses_one_quote_only_before_a_formula_character(tmp_path: Path) -> None:
    # As a person might type it in a spreadsheet: a quote to keep =1+1 as text, and quotes that are just quotes.
    path = tmp_path / "sheet.csv"
    path.write_text(
        ",".join(FIELDS) + "\n"
        + "gsm_0_remove_1,gsm,'=1+1,\"\"\"7\"\"\",'quoted',''-x,it's fine,,\n",
        encoding="utf-8",
    )
    (candidate,) = _candidates(path)
    assert (candidate.question, candidate.rewritten_condition, candidate.rewritten_question,
            candidate.unsolvable_reason) == ("=1+1", "'quoted'", "'-x", "it's fine")
    assert candidate.ground_truth == "7"
