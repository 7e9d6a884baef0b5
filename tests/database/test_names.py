"""The rule for names (models, prompts, data sources, tags, accounts): no control, format or bidirectional
characters, the same on every database; and the messages that quote a refused name draw none of them."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotator.database import names
from annotator.import_export.records import ReadOptions

BIDI = [*"\u202a\u202b\u202c\u202d\u202e", *"\u2066\u2067\u2068\u2069", "\u200e", "\u200f", "\u061c"]
HIDING = ["\u200b", "\u2060", "\ufeff", "\u00ad", "\U000e0041", "\U000e0001"]  # zero width, BOM, soft hyphen, tags
CONTROLS = [chr(code) for code in [*range(0x20), *range(0x7F, 0xA0)]]
SEPARATORS = ["\u2028", "\u2029"]


@pytest.mark.parametrize("char", [*BIDI, *HIDING, *CONTROLS, *SEPARATORS, "\ud800"])
def test_a_control_format_or_bidirectional_character_anywhere_is_refused(char: str) -> None:
    for name in (char, f"gpt{char}4o", f"model{char}"):
        assert names.problem(name) is not None
        with pytest.raises(names.BadName, match=rf"^--prompt '.*' holds U\+{ord(char):04X} .*at character "):
            names.check(name, what="--prompt")


def test_the_message_names_the_first_refused_character_and_where_it_is() -> None:
    with pytest.raises(names.BadName) as caught:
        names.check("reliable\x00\u202eevil", what="prompt")
    assert str(caught.value) == (
        "prompt 'reliable\\x00\\u202eevil' holds U+0000 (a control character) at character 9: names may not hold "
        "control, format or bidirectional characters")
    assert "U+202E RIGHT-TO-LEFT OVERRIDE at character 2" in (names.problem("a\u202eb") or "")


@pytest.mark.parametrize("name", [
    "gpt-4o-mini-2024-07-18", "org/Qwen2.5-7B-Instruct", "aime_0", "import:sheet.xlsx", "Zoë Ødegård",
    "数学模型", "نموذج", "می\u200cخواهم",  # Persian needs the zero-width non-joiner inside words
    "👩\u200d💻 coder",  # an emoji sequence joined by the zero-width joiner
    "a\u00a0b", "x²", "tag with spaces",
])
def test_names_in_any_script_are_kept_as_they_are(name: str) -> None:
    assert names.problem(name) is None
    assert names.check(name, what="model") == name and names.cleaned(name) == name


@given(st.text(max_size=40))
def test_cleaned_and_shown_names_hold_nothing_the_rule_refuses(text: str) -> None:
    # What a message or a pseudo-annotator's name shows of any text is itself a name: nothing invisible or
    # reversed reaches a terminal, a log or a table.
    assert names.problem(names.cleaned(text)) is None
    assert names.problem(names.shown(text)) is None
    if names.problem(text) is None:
        assert names.cleaned(text) == text


@given(st.text(max_size=40))
def test_the_rule_is_the_characters_categories(text: str) -> None:
    refused = [c for c in text if unicodedata.category(c) in {"Cc", "Cf", "Cs", "Zl", "Zp"} and c not in "\u200c\u200d"]
    assert (names.problem(text) is None) == (not refused)


def test_the_import_options_are_names_and_the_error_names_the_option() -> None:
    for option, field in (("--model", "model"), ("--prompt", "prompt"), ("--data-source", "data_source"),
                          ("--annotator", "annotator")):
        with pytest.raises(ValueError, match=rf"^{option} 'x\\u202e' holds U\+202E"):
            ReadOptions(**{field: "x\u202e"})
    assert ReadOptions(model="gpt-4o", prompt="reliable").model == "gpt-4o"


def test_a_pseudo_annotator_named_after_a_file_is_cleaned_not_refused() -> None:
    assert ReadOptions().annotator_for(Path("sheet\u202exslx.csv")) == "import:sheet\\u202exslx.csv"
    assert ReadOptions(annotator="Zoë").annotator_for(Path("a.csv")) == "Zoë"


def test_every_code_point_is_decided_without_error() -> None:
    # No character makes the rule raise (unnamed controls, surrogates, unassigned code points).
    for code in range(0, sys.maxunicode + 1, 97):
        names.problem(chr(code))

