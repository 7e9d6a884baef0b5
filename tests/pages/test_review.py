"""The Review page (AppTest, real SQLite file, transcripts as the judge leaves them): what the page hands the
browser's queue component (the transcripts around the reviewer's place, in the queue's order, as text and
sanitized math), reviews sent as the browser sends them, blind mode, roles. (Keys are pressed for real in
tests/e2e/test_review.py.)"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from streamlit.testing.v1 import AppTest

from annotator.database.engine import read_session, write_session
from annotator.database.models import Judgement, Transcript, TranscriptEvent
from annotator.transcripts import DEFAULT_TAGS
from tests.support import queue_component
from tests.support.candidates import add_user, sign_in_app
from tests.support.transcripts import add_transcripts

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "review.py")
KEY = "review_queue"


@pytest.fixture
def engine(sqlite_engine: Engine) -> Engine:
    return sqlite_engine


def _open(engine: Engine, name: str = "rev", role: str = "reviewer") -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=60)
    sign_in_app(app, engine, add_user(engine, name, role=role))
    app.run()
    assert not app.exception, app.exception
    return app


def _data(app: AppTest) -> dict[str, Any]:
    return queue_component.data(app)


def _items(app: AppTest) -> dict[int, dict[str, Any]]:
    return {item["id"]: item for item in _data(app)["items"]}


def _shown(app: AppTest, place: int) -> dict[str, Any]:
    """The transcript at `place` of the walk, as the page handed it."""
    walk = _data(app)["walk"]
    return _items(app)[walk["ids"][place - walk["start"]]]


def _text(runs: list[dict[str, Any]]) -> str:
    """Runs as the browser shows them typeset: text as text, each math run as [math]."""
    return "".join(run.get("t", "[math]") for run in runs)


def _review(item_id: int, verdict: str | None, *, tags: list[str] | None = None, comment: str = "") -> dict[str, Any]:
    made: dict[str, Any] = {"id": str(uuid.uuid4()), "item": item_id, "tags": tags or [], "comment": comment,
                            "key": 1.7e12, "spent": 800}
    made.update({"agree": True} if verdict is None else {"verdict": verdict})
    return made


def _send(app: AppTest, decisions: list[dict[str, Any]], position: int) -> dict[str, str]:
    return queue_component.send(app, decisions, component=KEY, position=position, generation=_data(app)["generation"])


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
        {"judge_class": "unsolvable", "differs_from_reference": True, "reasoning": "Let me think. " * 40},
    ])
    app = _open(engine)
    data = _data(app)
    assert data["walk"]["start"] == 0 and data["walk"]["size"] == 3 and data["walk"]["end"] == 3
    # The page's help says what M does now that every response comes typeset.
    assert any("M shows the math of the response on screen as the model wrote it" in c.value for c in app.caption)
    # The verdict another rule set gives otherwise comes first, with the judge's class and verdict and the model.
    first = _shown(app, 0)
    assert first["heading"] == "math_2_remove_1 · math · remove"
    assert first["reason"] == "differs from the reference rule"
    assert [[name, _text(runs)] for name, runs in first["judged"]] == [
        ["Extracted answer", "4"], ["Judge", "unsolvable → Successful (reliablemath)"]]
    assert first["badge"] == "another rule set differs" and first["judge"] == "S"
    assert first["response"]["title"] == "Response · model-a · standard prompt · sample 0"
    assert first["reasoning"]["title"] == "Reasoning (560 characters)"
    # The response typeset, each formula with its source for M.
    [boxed] = [run for run in first["response"]["runs"] if "m" in run]
    assert boxed["s"] == "$\\boxed{4}$" and boxed["m"].startswith("<math")
    # F with two tags and a comment; Enter agrees with the judge's F; R on the sampled one.
    walk = data["walk"]["ids"]
    sent = [_review(walk[0], "F", tags=[DEFAULT_TAGS[4], DEFAULT_TAGS[1]], comment="ignores $x$"),
            _review(walk[1], None), _review(walk[2], "R")]
    assert _send(app, sent, 3) == {decision["id"]: "saved" for decision in sent}
    assert _data(app)["walk"]["end"] == 3 and _data(app)["empty"] == "You are at the end of the queue."
    assert _reviews(engine) == {
        "math_2_remove_1": ("S", "F", ["arithmetic error", "ignored the contradiction"], "ignores $x$"),
        "math_1_contradict_1": ("F", "F", [], None),
        "math_0_remove_1": ("F", "R", [], None),
    }
    with read_session(engine) as session:
        events = session.execute(select(TranscriptEvent.action, TranscriptEvent.decision_id)
                                 .order_by(TranscriptEvent.id)).all()
    assert [tuple(e) for e in events] == [("review", d["id"]) for d in sent]
    # Sent again (no answer reached the browser): the same answers, nothing stored twice.
    assert _send(app, sent, 3) == {decision["id"]: "saved" for decision in sent}
    # Back to the last one: its review comes with it (built again), and can be cleared.
    _send(app, [], 2)
    assert _shown(app, 2)["mine"] == {"human": "R", "tags": [], "comment": ""}
    clear = {"id": str(uuid.uuid4()), "item": walk[2], "clear": True, "key": 1.7e12}
    assert _send(app, [clear], 2) == {clear["id"]: "saved"}
    assert _reviews(engine)["math_0_remove_1"] == ("F", None, None, None)


def test_reviews_made_before_a_reload_are_stored_and_the_walk_goes_on_after_them(engine: Engine) -> None:
    """The browser reloaded (or the server started again) sends reviews made on the walk it had: stored, and the
    queue opened again with them after the transcripts still to review; a review of this walk moves nothing."""
    add_transcripts(engine, [{} for _ in range(4)])
    app = _open(engine)
    walk, generation = _data(app)["walk"]["ids"], _data(app)["generation"]
    before = {**_review(walk[0], "S"), "walk": "a-walk-before"}
    assert _send(app, [before], 0) == {before["id"]: "saved"}
    data = _data(app)
    assert data["generation"] != generation and data["position"] == 0
    assert data["walk"]["ids"] == [*walk[1:], walk[0]]
    now = {**_review(walk[1], "R"), "walk": data["generation"]}
    assert _send(app, [now], 1) == {now["id"]: "saved"}
    assert _data(app)["generation"] == data["generation"] and _data(app)["walk"]["ids"] == data["walk"]["ids"]


def test_a_new_walk_hands_the_browser_every_transcript_of_its_window_whatever_it_held(engine: Engine) -> None:
    """The browser drops what it holds when the walk changes: the transcripts it said it had on the walk before are
    sent again, after reviews of another walk (a new app server) and after blind mode switched on."""
    add_transcripts(engine, [{} for _ in range(4)])
    app = _open(engine)
    walk, generation = _data(app)["walk"]["ids"], _data(app)["generation"]
    before = {**_review(walk[0], "S"), "walk": "a-walk-before"}
    queue_component.send(app, [before], component=KEY, position=0, generation=generation, have=walk)
    assert _data(app)["generation"] != generation
    assert sorted(_items(app)) == sorted(walk)
    queue_component.send(app, [], component=KEY, position=0, generation=_data(app)["generation"], have=walk)
    assert _items(app) == {}  # on the same walk: only what it lacks
    app.toggle(key="review_blind").set_value(True).run()
    assert sorted(_items(app)) == sorted(walk)


def test_a_review_the_rules_refuse_is_answered_with_why(engine: Engine) -> None:
    [tid] = add_transcripts(engine, [{"judge_class": None, "judge": None}])
    app = _open(engine)
    agree, bad = _review(tid, None), _review(tid, "S", tags=["x" * 500])
    outcomes = _send(app, [agree, bad], 0)
    assert outcomes[agree["id"]] == "not saved: the judge gave no verdict to agree with; press S, R or F"
    assert outcomes[bad["id"]].startswith("not saved: tag 'xxxx")
    assert _reviews(engine)["math_0_remove_1"][1] is None


def test_blind_mode_leaves_the_model_and_the_judge_out_of_what_the_browser_gets(engine: Engine) -> None:
    [tid] = add_transcripts(engine, [{"judge_class": "unsolvable", "model": "secret-model",
                                      "differs_from_reference": True}])
    app = _open(engine)
    seeing = _data(app)["generation"]
    app.toggle(key="review_blind").set_value(True).run()
    data = _data(app)
    assert data["blind"] is True and data["generation"] != seeing  # the browser drops what it held
    shown = json.dumps(data["items"])
    assert "secret" not in shown and "Judge" not in shown and "unsolvable" not in shown and "differ" not in shown
    assert _items(app)[tid]["judge"] is None and _items(app)[tid]["reason"] is None
    assert [_text(runs) for _, runs in _items(app)[tid]["judged"]] == ["4"]
    sent = _review(tid, "S")
    assert _send(app, [sent], 1) == {sent["id"]: "saved"}
    assert _reviews(engine)["math_0_remove_1"][1] == "S"


def test_a_solvable_problem_and_its_ground_truth_are_shown(engine: Engine) -> None:
    [tid] = add_transcripts(engine, [{"solvable": True, "judge_class": "correct", "judge": "S"}])
    item = _items(_open(engine))[tid]
    assert item["heading"] == "math_0 · math · solvable"
    [column] = item["columns"]
    assert column["title"] == "Solvable problem" and _text(column["runs"]).startswith("Problem math 0")
    assert [[name, _text(runs)] for name, runs in item["fields"]] == [["Ground truth", "1"]]


def test_model_text_goes_to_the_browser_as_text_and_sanitized_math(engine: Engine) -> None:
    payload = ('<script>alert(1)</script> <img src=x onerror="alert(2)"> **bold** [link](javascript:alert(3)) '
               '$<img src=x onerror=alert(4)>$ $\\href{javascript:alert(5)}{x}$')
    [tid] = add_transcripts(engine, [{"response": f"So $x = 2$. {payload}", "reasoning": payload,
                                      "extracted_answer": payload, "model": payload}])
    item = _items(_open(engine))[tid]
    runs = item["response"]["runs"] + item["reasoning"]["runs"] + item["judged"][0][1]
    texts = "".join(run.get("t", "") for run in runs)
    assert texts.count("<script>alert(1)</script>") == 3 and texts.count("[link](javascript:alert(3))") == 3
    # Math that is not safe as math (`\\href`) is its source as text; an HTML tag between dollars is typeset
    # letter by letter: MathML of allow-listed elements, the `<` and `>` escaped, its source kept for M.
    assert texts.count("$\\href{javascript:alert(5)}{x}$") == 3
    smuggled = [run for run in runs if run.get("s") == "$<img src=x onerror=alert(4)>$"]
    assert len(smuggled) == 2 and "<mo>&lt;</mo><mi>i</mi><mi>m</mi><mi>g</mi>" in smuggled[0]["m"]
    markup = [run["m"] for run in runs if "m" in run]
    assert all("<img" not in m and "href" not in m and "script" not in m and "onerror=" not in m for m in markup)
    assert item["response"]["title"].startswith(f"Response · {payload}")  # a text run in the browser


def test_tags_are_edited_on_the_page(engine: Engine) -> None:
    add_transcripts(engine, [{}])
    app = _open(engine)
    app.text_area(key="review_tag_text").input("assumed a value\nmisread a variable\n").run()
    app.button(key="save_tags").click().run()
    assert _data(app)["tags"] == ["assumed a value", "misread a variable"]
    app = _open(engine, "rev2")
    assert _data(app)["tags"] == ["assumed a value", "misread a variable"]
    app.text_area(key="review_tag_text").input("\n".join(f"t{i}" for i in range(10))).run()
    app.button(key="save_tags").click().run()
    assert "needs 1 to 9 tags" in app.error[0].value


def test_annotators_may_not_open_the_review_page(engine: Engine) -> None:
    app = _open(engine, "ann", "annotator")
    assert [e.value for e in app.error] == [
        "Only reviewers and admins may open this page; you are signed in as ann (annotator)."
    ]


def test_an_empty_project_says_so(engine: Engine) -> None:
    data = _data(_open(engine, "boss", "admin"))
    assert data["walk"] == {"start": 0, "ids": [], "end": 0, "size": 0}
    assert data["empty"] == "There are no transcripts for these filters yet."


def test_a_disabled_reviewer_stores_nothing_and_is_signed_out(engine: Engine) -> None:
    from annotator.database.models import Annotator

    [tid] = add_transcripts(engine, [{}])
    app = _open(engine)
    with write_session(engine) as session:
        session.execute(Annotator.__table__.update().values(is_active=False))
    app.session_state[KEY] = {"sent": {"decisions": [_review(tid, "S")], "position": 0,
                                       "generation": _data(app)["generation"], "n": 1}}
    app.run()
    assert not app.exception, app.exception
    assert _reviews(engine)["math_0_remove_1"][1] is None
    assert app.session_state["auth_message"] == "Signed out: your account has been disabled; nothing was saved."


def test_an_llm_judges_reason_is_sent_and_left_out_when_blind(engine: Engine) -> None:
    [tid] = add_transcripts(engine, [{"judge_class": None, "judge": "F", "judge_rule": "llm",
                                      "judge_version": "judge-m@v1"}])
    with write_session(engine) as session:
        session.add(Judgement(transcript_id=tid, rule="llm", model="judge-m", prompt_version="v1", verdict="F",
                              reason="It gives **9**, the <b>original</b> answer."))
    app = _open(engine)
    judged = {name: _text(runs) for name, runs in _items(app)[tid]["judged"]}
    assert judged == {"Extracted answer": "4", "Judge": "— → Failed (llm)",
                      "Why": "It gives **9**, the <b>original</b> answer."}
    app.toggle(key="review_blind").set_value(True).run()
    assert "It gives" not in json.dumps(_data(app)["items"]) and "Why" not in json.dumps(_data(app)["items"])
