"""The page table (`ui.pages`): every page file is in it once, and every page's guard asks it."""

from __future__ import annotations

import ast

import pytest

from ui.pages import FOLDER, PAGES, page


def test_every_page_file_has_one_row_and_every_row_a_file() -> None:
    assert sorted(row.file for row in PAGES) == sorted(path.name for path in FOLDER.glob("*.py"))
    assert all(row.path.is_file() for row in PAGES)
    assert len({row.url_path for row in PAGES}) == len(PAGES) and len({row.title for row in PAGES}) == len(PAGES)
    assert [row.file for row in PAGES if row.default] == ["annotate.py"]


def test_a_page_is_found_by_its_file() -> None:
    assert page(str(FOLDER / "team.py")).title == "Team"
    with pytest.raises(LookupError, match="nosuch.py is not in"):
        page("nosuch.py")


@pytest.mark.parametrize("row", PAGES, ids=lambda row: row.file)
def test_each_page_starts_with_the_guard_that_asks_the_table(row) -> None:  # type: ignore[no-untyped-def]
    """It runs `engine, user = guard.require_page(__file__)` in its own code (not in a branch), and has no other
    guard naming a capability of its own (its callbacks declare theirs)."""
    tree = ast.parse(row.path.read_text(encoding="utf-8"))
    guards = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and ast.unparse(node.func).startswith(
        "guard.require")]
    assert [ast.unparse(node) for node in guards] == ["guard.require_page(__file__)"]
    assert "engine, user = guard.require_page(__file__)" in [ast.unparse(statement) for statement in tree.body]
