"""Adjudicate's queues held in the browser, in real headless Chromium: every key of the disputes and of the audit
sample by keyboard alone, a burst near and through a distant network, a reload in a burst, a stalled network, an
app server killed and started again, a lost claim. Every check ends on the database: each key one decision, stored
once, in the order pressed.

"Far" runs the browser through a TCP proxy that holds each direction 75 ms (`tests.support.tcp_proxy`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import (
    Adjudication,
    AnnotationEvent,
    Annotator,
    AuditItem,
    DisputeClaim,
    SentDecision,
    utcnow,
)
from annotator.labelling import audit, browser_adjudication, labels
from tests.e2e.conftest import RunningApp, open_page, start_app, stop_app
from tests.support.annotate_keys import all_saved, ready
from tests.support.candidates import add_candidates, add_user
from tests.support.faults import killed_and_started_again, stalled
from tests.support.tcp_proxy import DelayProxy

pytestmark = pytest.mark.e2e

PASSWORD = "settle it please"
DECISIONS = {"1": (1, 0), "2": (1, 1), "0": (0, None)}
COMMENT = "Bound x < 2 is **gone**; 1 2 0 s b c, see  two spaces"
BURST = 20
GAP_SECONDS = 0.02  # between the keys of a burst: the pace of the test's fingers, not a wait for the page


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    add_user(get_engine(url), "rev", role="reviewer", password=PASSWORD)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def _disputes(app: RunningApp, count: int) -> list[int]:
    """`count` ties (ann: unsolvable · simple, bea: not acceptable), in the queue's order: aime_0, aime_1, ..."""
    engine = get_engine(app.database_url)
    ids = add_candidates(engine, count, data_source="aime", rewrite_types=("remove",))
    ann, bea = add_user(engine, "ann"), add_user(engine, "bea")
    rows = [labels.LabelRow(cid, ann.id, 1, 0, f"ann on {cid}") for cid in ids]
    rows += [labels.LabelRow(cid, bea.id, 0, None) for cid in ids]
    with write_session(engine) as session:
        labels.record_labels(session, rows=rows)
    return ids


def _name(i: int) -> str:
    return f"aime_{i}_remove_1"


def shows(page, heading: str) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_function("(h) => document.querySelector('.aq-heading')?.innerText === h", arg=heading)


def _comment(page, text: str) -> None:  # type: ignore[no-untyped-def]
    page.keyboard.press("c")
    assert page.evaluate("document.activeElement?.classList.contains('aq-comment')")
    page.keyboard.type(text)
    page.keyboard.press("Escape")
    assert not page.evaluate("document.activeElement?.classList.contains('aq-comment')")


def _adjudications(app: RunningApp) -> dict[int, tuple[int, int | None, str | None]]:
    with read_session(get_engine(app.database_url)) as session:
        return {row.candidate_id: (row.human_check, row.difficulty_eval, row.comment)
                for row in session.execute(select(Adjudication)).scalars()}


def test_every_dispute_key_by_keyboard_alone(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    ids = _disputes(app, 8)
    page = browser.new_context(viewport={"width": 1000, "height": 500}).new_page()
    open_page(page, app.url, name="rev", password=PASSWORD, link="Adjudicate")
    shows(page, _name(0))
    assert "ann on" in page.locator(".aq-item:not([hidden]) .aq-table").inner_text()  # the labels, beside it
    _comment(page, COMMENT)
    page.keyboard.press("2")
    shows(page, _name(1))
    assert page.locator(".aq-comment").input_value() == ""  # the next one starts without one
    page.keyboard.press("s")
    shows(page, _name(2))
    page.mouse.move(700, 300)
    page.mouse.wheel(0, 3000)  # the next one starts at its top, wherever this one was scrolled to
    page.wait_for_function("() => document.querySelector('.aq-heading').getBoundingClientRect().top < 0")
    page.keyboard.press("0")
    shows(page, _name(3))
    assert page.evaluate("document.querySelector('.aq-heading').getBoundingClientRect().top") >= 0
    # B: back to my last decision, shown as mine; a key changes it and goes forward.
    page.keyboard.press("b")
    shows(page, _name(2))
    page.get_by_text("You decided this one").wait_for()
    page.keyboard.press("1")
    shows(page, _name(3))
    page.keyboard.press("b")
    page.keyboard.press("b")
    shows(page, _name(0))
    assert page.locator(".aq-comment").input_value() == COMMENT
    page.keyboard.press("s")
    page.keyboard.press("s")
    shows(page, _name(3))
    page.keyboard.press("1")
    shows(page, _name(4))
    all_saved(page)
    page.reload()  # B past what the browser holds: the server's last decision of mine
    shows(page, _name(4))
    page.keyboard.press("b")
    shows(page, _name(3))
    page.context.close()
    assert _adjudications(app) == {ids[0]: (1, 1, COMMENT), ids[2]: (1, 0, None), ids[3]: (1, 0, None)}


def test_every_audit_key_by_keyboard_alone(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    engine = get_engine(app.database_url)
    ids = add_candidates(engine, 5, data_source="aime", rewrite_types=("remove",))
    ann = add_user(engine, "ann")
    with write_session(engine) as session:
        labels.record_labels(session, rows=[labels.LabelRow(cid, ann.id, 1, 0, "ann's own") for cid in ids])
        rev = session.execute(select(Annotator.id).where(Annotator.name == "rev")).scalar_one()
        audit.draw(session, size=4, seed=3, drawn_by=rev)
        order = [row["data_id"] for row in audit.sample_rows(session)]
    page = browser.new_context().new_page()
    open_page(page, app.url, name="rev", password=PASSWORD, link="Adjudicate")
    shows(page, "Nothing to adjudicate")
    page.locator(".stSelectbox input").first.focus()
    page.keyboard.type("Audit")
    page.get_by_role("option", name="Audit sample").wait_for()
    page.keyboard.press("Enter")
    page.wait_for_function("() => !document.activeElement || document.activeElement.tagName !== 'INPUT'")
    shows(page, order[0])
    assert page.locator(".aq-table").count() == 0 and "ann's own" not in page.locator(".aq-root").inner_text()
    _comment(page, COMMENT)
    page.keyboard.press("2")  # not an audit key
    page.keyboard.press("b")  # nor this
    shows(page, order[0])
    page.keyboard.press("1")
    shows(page, order[1])
    page.keyboard.press("s")
    shows(page, order[2])
    page.keyboard.press("0")
    shows(page, order[3])
    all_saved(page)
    page.context.close()
    with read_session(engine) as session:
        stored = {row[0]: tuple(row[1:]) for row in session.execute(
            select(AuditItem.position, AuditItem.unsolvable, AuditItem.comment))}
    assert stored == {0: (1, COMMENT), 1: (None, None), 2: (0, None), 3: (None, None)}


def _burst(page, keys: list[str]) -> None:  # type: ignore[no-untyped-def]
    for key in keys:
        page.keyboard.press(key)
        time.sleep(GAP_SECONDS)


def _in_order(app: RunningApp, ids: list[int], keys: list[str]) -> None:
    """The first `len(keys)` disputes decided with `keys`, each once, the events' key times in the order pressed."""
    with read_session(get_engine(app.database_url)) as session:
        events = session.execute(select(AnnotationEvent.candidate_id, AnnotationEvent.at, AnnotationEvent.decision_id)
                                 .where(AnnotationEvent.action == "adjudicate").order_by(AnnotationEvent.id)).all()
        sent = session.execute(select(func.count()).select_from(SentDecision)).scalar_one()
    assert [event.candidate_id for event in events] == ids[:len(keys)]
    assert [event.at for event in events] == sorted(event.at for event in events)
    assert len({event.decision_id for event in events}) == len(keys) == sent
    decided = _adjudications(app)
    assert [decided[ids[i]][:2] for i in range(len(keys))] == [DECISIONS[key] for key in keys]


@pytest.mark.parametrize("far", [False, True], ids=["near", "far"])
def test_a_burst_of_twenty_keys_twenty_ms_apart_is_twenty_decisions_in_order(  # type: ignore[no-untyped-def]
    app: RunningApp, browser, far: bool
) -> None:
    ids = _disputes(app, BURST + 5)
    with DelayProxy(int(app.url.rsplit(":", 1)[1]), delay=0.075 if far else 0) as proxy:
        page = browser.new_context().new_page()
        open_page(page, proxy.url, name="rev", password=PASSWORD, link="Adjudicate")
        shows(page, _name(0))
        ready(page, BURST + 1)
        keys = [("1", "2", "0")[i % 3] for i in range(BURST)]
        _burst(page, keys)
        shows(page, _name(BURST))
        all_saved(page)
        page.context.close()
    _in_order(app, ids, keys)


def test_a_reload_in_the_middle_of_a_burst_loses_nothing_and_doubles_nothing(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    ids = _disputes(app, 30)
    with DelayProxy(int(app.url.rsplit(":", 1)[1]), delay=0.075) as proxy:
        page = browser.new_context().new_page()
        open_page(page, proxy.url, name="rev", password=PASSWORD, link="Adjudicate")
        shows(page, _name(0))
        ready(page, 13)
        first = [("1", "2", "0")[i % 3] for i in range(12)]
        _burst(page, first)
        page.reload()  # some answered, some sent and not answered, some not sent yet
        shows(page, _name(12))
        all_saved(page)
        ready(page, 9)
        second = [("0", "1")[i % 2] for i in range(8)]
        _burst(page, second)
        shows(page, _name(20))
        all_saved(page)
        page.context.close()
    _in_order(app, ids, first + second)
    with read_session(get_engine(app.database_url)) as session:  # decided: their claims released
        held = set(session.execute(select(DisputeClaim.candidate_id)).scalars())
    assert not held & set(ids[:20])


def test_a_decision_on_a_dispute_two_others_took_meanwhile_is_said_and_it_comes_back(  # type: ignore[no-untyped-def]
    app: RunningApp, browser
) -> None:
    """rev's hold on the dispute on screen expired and two other reviewers hold it now: rev's key shows the next
    one at once, then the refusal naming the dispute, which is back on screen; nothing is stored for it, S goes on."""
    ids = _disputes(app, 4)
    engine = get_engine(app.database_url)
    rex, roy = add_user(engine, "rex", role="reviewer"), add_user(engine, "roy", role="reviewer")
    page = browser.new_context().new_page()
    open_page(page, app.url, name="rev", password=PASSWORD, link="Adjudicate")
    shows(page, _name(0))
    all_saved(page)
    with write_session(engine) as session:
        session.execute(update(DisputeClaim).where(DisputeClaim.candidate_id == ids[0])
                        .values(expires_at=utcnow() - timedelta(minutes=1)))
        for reviewer in (rex, roy):
            browser_adjudication.fill(session, reviewer_id=reviewer.id, queue=browser_adjudication.DISPUTES, size=1)
    page.keyboard.press("1")
    page.get_by_role("alert").filter(has_text=f"{_name(0)}: {browser_adjudication.CLAIM_LOST}").wait_for()
    shows(page, _name(0))
    page.keyboard.press("s")
    shows(page, _name(1))
    all_saved(page)
    page.context.close()
    assert _adjudications(app) == {}
    with read_session(engine) as session:
        outcomes = session.execute(select(SentDecision.outcome).where(SentDecision.item_id == ids[0])).scalars().all()
    assert sorted(outcomes) == sorted([browser_adjudication.CLAIM_LOST, "skipped"])


def test_a_stalled_network_holds_ten_keys_and_stores_each_once_after(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    ids = _disputes(app, 16)
    keys = [("1", "2", "0")[i % 3] for i in range(10)]

    def decide() -> None:
        _burst(page, keys)
        shows(page, _name(10))  # the browser had them: nothing waited for the network

    with DelayProxy(int(app.url.rsplit(":", 1)[1]), delay=0.075) as proxy:
        page = browser.new_context().new_page()
        open_page(page, proxy.url, name="rev", password=PASSWORD, link="Adjudicate")
        shows(page, _name(0))
        ready(page, 11)
        stalled(proxy, page, decide, len(keys), lambda: _adjudications(app))
        page.context.close()
    _in_order(app, ids, keys)


def test_an_app_server_killed_with_five_decisions_waiting_stores_each_once_when_back(  # type: ignore[no-untyped-def]
    app: RunningApp, browser
) -> None:
    ids = _disputes(app, 10)
    keys = ["2", "0", "1", "0", "2"]

    def decide() -> None:
        _burst(page, keys)
        shows(page, _name(5))

    page = browser.new_context().new_page()
    open_page(page, app.url, name="rev", password=PASSWORD, link="Adjudicate")
    shows(page, _name(0))
    ready(page, 6)
    killed_and_started_again(app, page, decide, len(keys), lambda: _adjudications(app))
    shows(page, _name(5))  # still the one after them, and the keys go on
    page.keyboard.press("1")
    shows(page, _name(6))
    all_saved(page)
    page.context.close()
    _in_order(app, ids, [*keys, "1"])
    with read_session(get_engine(app.database_url)) as session:  # decided: their claims released
        held = set(session.execute(select(DisputeClaim.candidate_id)).scalars())
    assert not held & set(ids[:6])
