"""The evaluation prompts, word for word: ReliableMath Fig. 14/15 (Appendix I.1) and its released
`math_instruction.json`; TreeCut's zero-shot template (Appendix B.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotator.transcripts.collect.prompts import (
    RELIABLE_INSTRUCTION,
    ROLE,
    STANDARD_INSTRUCTION,
    messages,
)


def _seed(shared_data: Path, prefix: str) -> str:
    [paper] = (shared_data.parent / "seeds").glob(f"{prefix}_*.txt")
    return paper.read_text(encoding="utf-8")


def _as_one_text(question: str, **kwargs: bool | str) -> str:
    system, user = messages(question, **kwargs)  # type: ignore[arg-type]
    assert (system["role"], user["role"]) == ("system", "user")
    return f"{system['content']}\n{user['content']}"


def test_the_instructions_are_the_released_ones_with_their_curly_quotes(shared_data: Path) -> None:
    """math_instruction.json: `std` is the standard prompt (Fig. 14), `real` the reliable one (Fig. 15)."""
    released = json.loads((shared_data / "reliablemath" / "math_instruction.json").read_text(encoding="utf-8"))
    assert (ROLE, STANDARD_INSTRUCTION, RELIABLE_INSTRUCTION) == (released["role"], released["std"], released["real"])
    assert "Let\u2018s" in STANDARD_INSTRUCTION  # U+2018, as released (not an apostrophe)
    assert "\\boxed{it\u2019s unsolvable}" in RELIABLE_INSTRUCTION
    assert RELIABLE_INSTRUCTION.count("don\u2019t") == 2 and "'" not in RELIABLE_INSTRUCTION


@pytest.mark.parametrize(("prompt", "figure", "title"), [
    ("standard", 14, "Template of Standard Mathematical Problem-Solving Prompt "),
    ("reliable", 15, "Template of Reliable Mathematical Problem-Solving Prompt "),
])
def test_the_messages_are_the_papers_figures(shared_data: Path, prompt: str, figure: int, title: str) -> None:
    """ReliableMath Appendix I.1, Fig. 14 and 15: role line, instruction line, `### Mathematical Question ###`."""
    paper = _seed(shared_data, "003")
    start = paper.index(title) + len(title)
    template = paper[start:paper.index(f"\nFigure {figure}:", start)]
    assert _as_one_text("<math_question>", prompt=prompt) == template


def test_treecut_items_get_treecuts_template(shared_data: Path) -> None:
    """TreeCut Appendix B.1: a chain-of-thought system message; "Answer: x" / "Answer: unknown." in the user's."""
    paper = _seed(shared_data, "000")
    block = paper[paper.index("// system message (for non-reasoning models)\n"):paper.index("B.2 Evaluation")]
    system_text = block.split("\n")[1]
    user_text = block.split("// user message\n")[1].split("\n```")[0]
    for prompt in ("standard", "reliable"):  # the paper has one prompt for TreeCut
        system, user = messages("{{question}}", prompt=prompt, treecut=True)  # type: ignore[arg-type]
        assert (system["content"], user["content"]) == (system_text, user_text)
    assert "'Answer: unknown.'" in user_text


def test_a_question_is_put_in_as_it_is() -> None:
    question = "Let $x = \\frac{1}{2}$ and {y} = 3. What is $x+y$?"
    assert messages(question, prompt="standard")[1]["content"].endswith(f"### Mathematical Question ###: {question}")
