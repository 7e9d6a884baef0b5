"""The Review page (AppTest, real SQLite file, transcripts as the judge leaves them): the queue's first item,
verdicts, Enter-agrees, tags, blind mode, text safety, roles. (Keys are pressed for real in tests/e2e.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from streamlit.testing.v1 import AppTest

from annotator.database.engine import get_engine, read_session
from annotator.database.models import Transcript, TranscriptEvent
from tests.support.candidates import add_user, sign_in_app
from tests.support.transcripts import add_transcripts

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "review.py")


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return get_engine(f"sqlite:///{tmp_path / 'review.sqlite'}")


def _open(engine: Engine, name: str = "rev", role: str = "reviewer") -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=60)
    sign_in_app(app, engine, add_user(engine, name, role=role))
    app.session_state["review_ready"] = True  # the browser's report that the buttons work (`ui.ready`)
    app.run()
    assert not app.exception, app.exception
    return app


def _heading(app: AppTest) -> str:
    return next(m.value for m in app.markdown if m.value.startswith("#### "))


def _text(app: AppTest) -> str:
    return "\n".join(m.value for m in app.markdown)


def _click(app: AppTest, key: str) -> AppTest:
    app.button(key=key).click().run()
    assert not app.exception, app.exception
    return app


def _reviews(engine: Engine) -> dict[str, tuple[str | None, str | None, list | None, str | None]]:
    with read_session(engine) as session:
        rows = session.execute(
            select(Transcript.data_id, Transcript.judge, Transcript.human, Transcript.tags, Transcript.comment)
        )
        return {row[0]: tuple(row[1:]) for row in rows}


def test_a_reviewer_overrides_agrees_and_tags_in_queue_order(engine: Engine) -> None:
    add_transcripts(engine, [
        {"judge_class": "incorrect"},
        {"judge_class": "unmatched", "extracted_answer": None},
        {"judge_class": "unsolvable", "rules_disagree": True, "reasoning": "Let me think. " * 40},
    ])
    app = _open(engine)
    # The rule sets' disagreement comes first, with the judge's class and verdict and the model.
    assert _heading(app) == "#### math\\_2\\_remove\\_1 · math · remove"
    text = _text(app)
    assert "**Judge:** unsolvable → Successful (reliablemath)" in text and "model\\-a · standard prompt" in text
    assert "**Rewritten question** · :green-background[added or changed]" in text
    assert [e.label for e in app.expander][0].startswith("Reasoning (560 characters)")
    # Tags 1 and 5 on, 1 off again, 2 on; a comment; F overrides the judge's S.
    for key in ("tag_1", "tag_5", "tag_1", "tag_2"):
        _click(app, key)
    assert app.button(key="tag_2").proto.type == "primary" and app.button(key="tag_1").proto.type == "secondary"
    app.text_input(key="review_comment").input("ignores $x$").run()
    _click(app, "verdict_F")
    assert _heading(app) == "#### math\\_1\\_contradict\\_1 · math · contradict"  # then the judge unsure
    assert "Saved math\\_2\\_remove\\_1: Failed." in app.caption[0].value
    # Enter agrees with the judge's F; then R on the sampled one.
    _click(app, "agree")
    _click(app, "verdict_R")
    assert _heading(app) == "#### Nothing left to review"
    assert _reviews(engine) == {
        "math_2_remove_1": ("S", "F", ["arithmetic error", "ignored the contradiction"], "ignores $x$"),
        "math_1_contradict_1": ("F", "F", [], None),
        "math_0_remove_1": ("F", "R", [], None),
    }
    with read_session(engine) as session:
        assert session.execute(select(TranscriptEvent.action)).scalars().all() == ["review"] * 3
    # Back to the last one: its review is shown and can be cleared (the judge's verdict counts again).
    _click(app, "back")
    assert "Reviewed: Refused" in app.caption[0].value
    _click(app, "clear")
    assert _reviews(engine)["math_0_remove_1"] == ("F", None, None, None)


def test_blind_mode_hides_the_model_and_the_judge(engine: Engine) -> None:
    add_transcripts(engine, [{"judge_class": "unsolvable", "model": "secret-model", "rules_disagree": True}])
    app = _open(engine)
    app.toggle(key="review_blind").set_value(True).run()
    text = _text(app) + "\n".join(c.value for c in app.caption)
    assert "secret" not in text and "Judge" not in text and "unsolvable →" not in text and "disagree" not in text
    assert "**Extracted answer:** 4" in text
    assert app.button(key="agree").disabled
    _click(app, "verdict_S")
    assert _reviews(engine)["math_0_remove_1"][1] == "S"


def test_a_solvable_problem_and_its_ground_truth_are_shown(engine: Engine) -> None:
    add_transcripts(engine, [{"solvable": True, "judge_class": "correct", "judge": "S"}])
    app = _open(engine)
    assert _heading(app) == "#### math\\_0 · math · solvable"
    assert "**Solvable problem**" in _text(app) and "**Ground truth:** 1" in _text(app)


def _markdown_is_text_only(text: str) -> None:
    """Every "<" of the payload is escaped; no emphasis or link syntax survives."""
    assert text.count("<") == text.count("\\<") and "**bold**" not in text and "[link](" not in text


def test_model_text_is_rendered_as_text(engine: Engine) -> None:
    payload = '<script>alert(1)</script> <img src=x onerror="alert(2)"> **bold** [link](javascript:alert(3))'
    escaped = "\\<script\\>alert\\(1\\)\\<\\/script\\>"
    add_transcripts(engine, [{"response": f"So $x = 2$. {payload}", "reasoning": payload,
                              "extracted_answer": payload, "model": payload}])
    app = _open(engine)
    # By default the response and the reasoning are plain text (`st.text`, no Markdown), exactly as written;
    # the model's name and the extracted answer are escaped Markdown.
    assert [t.value for t in app.text] == [f"So $x = 2$. {payload}", payload]
    _markdown_is_text_only(_text(app))
    assert _text(app).count(escaped) == 2 and "$x = 2$" not in _text(app)
    # M: this response typeset through `escape_markdown` (its LaTeX math, the rest escaped); the reasoning,
    # in the same mode, too.
    _click(app, "typeset_math")
    assert app.button(key="typeset_math").label == "✓ Typeset math · M"
    assert app.text.len == 0
    assert "$x = 2$" in _text(app)
    _markdown_is_text_only(_text(app))
    assert _text(app).count(escaped) == 4


def test_typeset_math_for_one_response_or_for_the_session(engine: Engine) -> None:
    add_transcripts(engine, [{"response": f"Step {i}: $\\omega^{i}$."} for i in range(3)])
    app = _open(engine)
    first = _heading(app)
    assert "math as written (M typesets it)" in _text(app) and app.text[0].value.startswith("Step ")
    # M typesets the response on screen only; M again shows it as text; the next transcript is text again.
    _click(app, "typeset_math")
    assert app.text.len == 0 and "$\\omega^" in _text(app)
    _click(app, "typeset_math")
    assert app.text.len == 1
    _click(app, "typeset_math")
    _click(app, "verdict_S")
    assert _heading(app) != first and app.text.len == 1 and "$\\omega^" not in _text(app)
    # The sidebar's setting typesets every response for the rest of the session (kept in the page's state,
    # which outlives the toggle when another page is opened); M is then already on. Its help says the cost.
    assert "takes longer" in app.toggle(key="review_math").help
    app.toggle(key="review_math").set_value(True).run()
    assert app.text.len == 0 and "$\\omega^" in _text(app)
    assert app.button(key="typeset_math").disabled and app.button(key="typeset_math").label.startswith("✓")
    _click(app, "verdict_S")
    assert app.text.len == 0 and "$\\omega^" in _text(app)
    assert app.session_state["review"]["typeset"] is True
    app.toggle(key="review_math").set_value(False).run()
    assert app.text.len == 1


def test_tags_are_edited_on_the_page(engine: Engine) -> None:
    add_transcripts(engine, [{}])
    app = _open(engine)
    app.text_area(key="review_tag_text").input("assumed a value\nmisread a variable\n").run()
    _click(app, "save_tags")
    app = _open(engine, "rev2")
    assert [app.button(key=f"tag_{i}").label for i in (1, 2)] == ["assumed a value", "misread a variable"]
    app.text_area(key="review_tag_text").input("\n".join(f"t{i}" for i in range(10))).run()
    _click(app, "save_tags")
    assert "needs 1 to 9 tags" in app.error[0].value


def test_annotators_may_not_open_the_review_page(engine: Engine) -> None:
    app = _open(engine, "ann", "annotator")
    assert [e.value for e in app.error] == [
        "Only reviewers and admins may open this page; you are signed in as ann (annotator)."
    ]


def test_an_empty_project_says_so(engine: Engine) -> None:
    app = _open(engine, "boss", "admin")
    assert [i.value for i in app.info] == ["There are no transcripts for these filters yet."]


def test_an_llm_judges_reason_is_shown_as_text_and_hidden_when_blind(engine: Engine) -> None:
    from annotator.database.engine import write_session
    from annotator.database.models import Judgement

    [tid] = add_transcripts(engine, [{"judge_class": None, "judge": "F", "judge_rule": "llm",
                                      "judge_version": "judge-m@v1"}])
    with write_session(engine) as session:
        session.add(Judgement(transcript_id=tid, rule="llm", model="judge-m", prompt_version="v1", verdict="F",
                              reason="It gives **9**, the <b>original</b> answer."))
    app = _open(engine)
    text = _text(app)
    assert "**Judge:** — → Failed (llm) · **Why:** It gives \\*\\*9\\*\\*" in text
    assert "\\<b\\>original\\<\\/b\\>" in text and "<b>" not in text
    app.toggle(key="review_blind").set_value(True).run()
    assert "Why" not in _text(app) and "original" not in _text(app)
