"""Annotate's queue held in the browser, in real headless Chromium: every key by keyboard alone, bursts, a stalled
network, a reload in a burst, an app server killed and started again. Every check ends on the database: each key
one decision, stored once, in the order pressed.

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
from annotator.database.models import Annotation, AnnotationEvent, CandidateClaim, SentDecision, utcnow
from annotator.labelling import browser_queue, queue
from tests.e2e.conftest import RunningApp, start_app, stop_app
from tests.support.annotate_keys import PASSWORD, all_saved, heading, on_screen, press, ready, shows, sign_in
from tests.support.candidates import add_candidates, add_user
from tests.support.faults import killed_and_started_again, stalled
from tests.support.tcp_proxy import DelayProxy

pytestmark = pytest.mark.e2e

LABELS = {"1": (1, 0), "2": (1, 1), "0": (0, None)}
# Decision keys, Markdown and spaces inside: all of it is the comment, none of it a key.
COMMENT = "Bound x < 2 is **gone**; 1 2 0 s b c, see  two spaces"
BURST = 20
GAP_SECONDS = 0.02  # between the keys of a burst: the pace of the test's fingers, not a wait for the page


def _data_id(i: int) -> str:
    return f"aime_{i}_{'remove' if i % 2 == 0 else 'contradict'}_1"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[RunningApp]:
    url = f"sqlite:///{tmp_path / 'annotator.sqlite'}"
    add_user(get_engine(url), "ann", password=PASSWORD)
    running = start_app(url, tmp_path / "streamlit.log")
    yield running
    stop_app(running)


def _labels(app: RunningApp) -> list[tuple[int, int, int | None, str | None]]:
    """Every label in the order its first event was written: (candidate, human_check, difficulty_eval, comment)."""
    with read_session(get_engine(app.database_url)) as session:
        return [tuple(row) for row in session.execute(  # type: ignore[misc]
            select(Annotation.candidate_id, Annotation.human_check, Annotation.difficulty_eval, Annotation.comment)
            .order_by(Annotation.id))]


def _counts(app: RunningApp) -> tuple[int, int, int]:
    """(labels, events, decisions received)."""
    with read_session(get_engine(app.database_url)) as session:
        return tuple(session.execute(select(func.count()).select_from(table)).scalar_one()  # type: ignore[return-value]
                     for table in (Annotation, AnnotationEvent, SentDecision))


def _keys(count: int) -> list[str]:
    return [("1", "2", "0")[i % 3] for i in range(count)]


def _burst(page, keys: list[str]) -> None:  # type: ignore[no-untyped-def]
    for key in keys:
        page.keyboard.press(key)
        time.sleep(GAP_SECONDS)


def _in_order(app: RunningApp, ids: list[int], keys: list[str]) -> None:
    """The first `len(keys)` candidates labelled with `keys`, in that order, each once, the events' key times
    in the order pressed."""
    assert [row[:3] for row in _labels(app)] == [(ids[i], *LABELS[key]) for i, key in enumerate(keys)]
    with read_session(get_engine(app.database_url)) as session:
        events = session.execute(select(AnnotationEvent.candidate_id, AnnotationEvent.at)
                                 .order_by(AnnotationEvent.id)).all()
    assert [event.candidate_id for event in events] == ids[:len(keys)]
    assert [event.at for event in events] == sorted(event.at for event in events)


def test_every_key_by_keyboard_alone(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    engine = get_engine(app.database_url)
    ids = add_candidates(engine, 8, data_source="aime")
    add_candidates(engine, 2, data_source="gsm", start=50)
    page = browser.new_context(viewport={"width": 1000, "height": 500}).new_page()
    sign_in(page, app.url)
    shows(page, _data_id(0))
    # C: the comment; keys typed there are text; Esc gives the keys back (Streamlit's own C is not run).
    press(page, "c")
    assert page.evaluate("document.activeElement?.classList.contains('aq-comment')")
    page.keyboard.type(COMMENT)
    page.keyboard.press("Escape")
    assert not page.evaluate("document.activeElement?.classList.contains('aq-comment')")
    press(page, "2")
    shows(page, _data_id(1))
    assert page.locator(".aq-comment").input_value() == ""  # the next one starts without one
    press(page, "s")
    shows(page, _data_id(2))
    # The next one starts at its top, wherever the last one was scrolled to.
    page.mouse.move(700, 300)  # over the page's main part, not the sidebar
    page.mouse.wheel(0, 3000)
    page.wait_for_function("() => document.querySelector('.aq-heading').getBoundingClientRect().top < 0")
    press(page, "0")
    shows(page, _data_id(3))
    assert page.evaluate("document.querySelector('.aq-heading').getBoundingClientRect().top") >= 0
    # B: back to my last label, shown as mine; a key changes it and goes forward, S goes on to the queue.
    press(page, "b")
    shows(page, _data_id(2))
    page.get_by_text("You labelled this one").wait_for()
    press(page, "1")
    shows(page, _data_id(3))
    press(page, "b")
    press(page, "b")
    shows(page, _data_id(0))
    assert page.locator(".aq-comment").input_value() == COMMENT  # my label's comment, as given
    press(page, "s")
    shows(page, _data_id(2))
    press(page, "s")
    shows(page, _data_id(3))
    press(page, "1")
    shows(page, _data_id(4))
    all_saved(page)
    # One Esc closes a sidebar select box opened by keyboard and gives the keys back.
    page.locator(".stSelectbox input").first.focus()
    page.keyboard.press("ArrowDown")
    page.get_by_role("option", name="gsm").wait_for()
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.activeElement || document.activeElement.tagName !== 'INPUT'")
    press(page, "2")
    shows(page, _data_id(5))
    # A filter chosen by keyboard (type, Enter), then a key decides the filtered candidate; the filter survives
    # a reload.
    page.locator(".stSelectbox input").first.focus()
    page.keyboard.type("gsm")
    page.get_by_role("option", name="gsm").wait_for()
    page.keyboard.press("Enter")
    shows(page, "gsm_50_remove_1")
    press(page, "0")
    shows(page, "gsm_51_contradict_1")
    all_saved(page)
    page.reload()  # the sign-in holds (its cookie)
    shows(page, "gsm_51_contradict_1")
    assert "data_source=gsm" in page.url
    # B past what this browser holds (the reload emptied it): the server finds my labels before, one by one.
    press(page, "b")
    shows(page, "gsm_50_remove_1")
    page.get_by_text("You labelled this one").wait_for()
    press(page, "b")
    shows(page, _data_id(4))
    press(page, "1")  # changed, then on to the one after it
    shows(page, "gsm_50_remove_1")
    press(page, "s")
    shows(page, "gsm_51_contradict_1")
    all_saved(page)
    page.context.close()
    labels = {row[0]: row[1:] for row in _labels(app)}
    with read_session(engine) as session:
        gsm_first = session.execute(select(Annotation.candidate_id).order_by(Annotation.id.desc())).scalars().first()
    assert labels == {ids[0]: (1, 1, COMMENT), ids[2]: (1, 0, None), ids[3]: (1, 0, None), ids[4]: (1, 0, None),
                      gsm_first: (0, None, None)}


@pytest.mark.parametrize("far", [False, True], ids=["near", "far"])
def test_a_burst_of_twenty_keys_twenty_ms_apart_is_twenty_labels_in_order(  # type: ignore[no-untyped-def]
    app: RunningApp, browser, far: bool
) -> None:
    ids = add_candidates(get_engine(app.database_url), BURST + 15, data_source="aime")
    with DelayProxy(int(app.url.rsplit(":", 1)[1]), delay=0.075 if far else 0) as proxy:
        page = browser.new_context().new_page()
        sign_in(page, proxy.url)
        shows(page, _data_id(0))
        ready(page, BURST + 1)
        keys = _keys(BURST)
        _burst(page, keys)
        shows(page, _data_id(BURST))  # every key showed the next one
        all_saved(page)
        page.context.close()
    _in_order(app, ids, keys)
    assert _counts(app) == (BURST, BURST, BURST)


def test_a_stalled_network_holds_ten_keys_and_stores_each_once_after(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    ids = add_candidates(get_engine(app.database_url), 25, data_source="aime")
    keys = _keys(10)

    def decide() -> None:
        for key in keys:
            press(page, key)
        on_screen(page, _data_id(10))  # the browser had them: nothing waited for the network

    with DelayProxy(int(app.url.rsplit(":", 1)[1]), delay=0.075) as proxy:
        page = browser.new_context().new_page()
        sign_in(page, proxy.url)
        shows(page, _data_id(0))
        ready(page, 11)
        stalled(proxy, page, decide, len(keys), lambda: _counts(app)[0])
        page.context.close()
    _in_order(app, ids, keys)
    assert _counts(app) == (10, 10, 10)


def test_a_reload_in_the_middle_of_a_burst_loses_nothing_and_doubles_nothing(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    ids = add_candidates(get_engine(app.database_url), 40, data_source="aime")
    with DelayProxy(int(app.url.rsplit(":", 1)[1]), delay=0.075) as proxy:
        page = browser.new_context().new_page()
        sign_in(page, proxy.url)
        shows(page, _data_id(0))
        ready(page, 13)
        first = _keys(12)
        _burst(page, first)
        page.reload()  # some sent and answered, some sent and not answered, some not sent yet; the sign-in holds
        page.locator(".aq-root").wait_for()
        all_saved(page)
        on_screen = heading(page).split(" · ")[0]
        assert on_screen == _data_id(12)
        ready(page, 9)
        second = _keys(8)
        _burst(page, second)
        shows(page, _data_id(20))
        all_saved(page)
        page.context.close()
    _in_order(app, ids, first + second)
    assert _counts(app) == (20, 20, 20)


def test_an_app_server_killed_with_five_decisions_waiting_stores_each_once_when_back(  # type: ignore[no-untyped-def]
    app: RunningApp, browser
) -> None:
    ids = add_candidates(get_engine(app.database_url), 20, data_source="aime")
    keys = _keys(5)

    def decide() -> None:
        for key in keys:
            press(page, key)
        on_screen(page, _data_id(5))

    page = browser.new_context().new_page()
    sign_in(page, app.url)
    shows(page, _data_id(0))
    ready(page, 6)
    killed_and_started_again(app, page, decide, len(keys), lambda: any(_counts(app)))
    shows(page, _data_id(5))  # still the one after them, and the keys go on
    press(page, "2")
    shows(page, _data_id(6))
    all_saved(page)
    page.context.close()
    _in_order(app, ids, [*keys, "2"])
    assert _counts(app) == (6, 6, 6)


def test_a_refused_decision_is_said_and_its_candidate_comes_back(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    """ann's hold on the candidate on screen expired and bob labelled it meanwhile (one label per candidate): ann's
    key shows the next one at once, then the refusal, naming the candidate, which is back on screen; nothing of
    ann's is stored for it, and S goes on."""
    engine = get_engine(app.database_url)
    ids = add_candidates(engine, 6, data_source="aime")
    bob = add_user(engine, "bob")
    page = browser.new_context().new_page()
    sign_in(page, app.url)
    shows(page, _data_id(0))
    all_saved(page)
    with write_session(engine) as session:
        session.execute(update(CandidateClaim).where(CandidateClaim.candidate_id == ids[0])
                        .values(expires_at=utcnow() - timedelta(minutes=1)))
        queue.decide(session, annotator_id=bob.id, candidate_id=ids[0], human_check=0, difficulty_eval=None)
    press(page, "1")
    page.get_by_role("alert").filter(has_text=f"{_data_id(0)}: {browser_queue.CLAIM_LOST}").wait_for()
    shows(page, _data_id(0))
    press(page, "s")
    shows(page, _data_id(1))
    all_saved(page)
    page.context.close()
    with read_session(engine) as session:
        stored = session.execute(select(Annotation.candidate_id, Annotation.annotator_id)).all()
        refused = session.execute(select(SentDecision.outcome).where(SentDecision.item_id == ids[0])).scalars().all()
    assert [tuple(row) for row in stored] == [(ids[0], bob.id)]
    assert browser_queue.CLAIM_LOST in refused


# The page's queue as its script keeps it (`queue.js`): the one whose element is on the page.
QUEUE = "[...window.__annotatorQueues.values()].find((q) => q.root?.isConnected)"


def test_a_key_pressed_while_the_queue_is_drawn_anew_decides_the_candidate_that_was_on_screen(  # type: ignore[no-untyped-def]
    app: RunningApp, browser
) -> None:
    """Streamlit sometimes draws the queue's element anew (a run of the whole app under load): for a moment there is
    no queue on the page. A key pressed then decides the candidate that was on screen once it is back; a second key
    in that moment decides nothing (the person could not see what it would decide)."""
    ids = add_candidates(get_engine(app.database_url), browser_queue.AHEAD + 5, data_source="aime")
    page = browser.new_context().new_page()
    sign_in(page, app.url)
    shows(page, _data_id(0))
    ready(page, browser_queue.AHEAD + 1)  # all it holds: no run of the page comes meanwhile to draw it again
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")
    # What Streamlit does when it draws the element anew: the component's clean-up, its element gone.
    page.evaluate(f"() => {{ const q = {QUEUE}; q.left(); q.root.remove(); }}")
    assert page.locator(".aq-root").count() == 0
    page.keyboard.press("1")
    page.keyboard.press("2")
    page.evaluate("window.__annotatorWake()")  # a run of the whole app: the component drawn again
    shows(page, _data_id(1))
    all_saved(page)
    assert page.evaluate(f"() => {{ const q = {QUEUE}; return [q.kept, q.pending.length]; }}") == [None, 0]
    page.context.close()
    assert [row[:3] for row in _labels(app)] == [(ids[0], *LABELS["1"])]
    assert _counts(app) == (1, 1, 1)


def test_candidates_lost_on_the_way_are_asked_for_again(app: RunningApp, browser) -> None:  # type: ignore[no-untyped-def]
    """The browser holds nothing to show, waits for no answer, and the server has not said the queue is empty (an
    answer carrying the next candidates never came): it asks again, and the keys go on."""
    ids = add_candidates(get_engine(app.database_url), browser_queue.AHEAD + 5, data_source="aime")
    page = browser.new_context().new_page()
    sign_in(page, app.url)
    shows(page, _data_id(0))
    ready(page, browser_queue.AHEAD + 1)  # all it holds: the page asks for no more of its own accord
    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")
    shown = page.evaluate(f"() => {{ const q = {QUEUE}; q.order = []; q.items.clear(); q.draw(); "
                          "return q.heading.textContent; }")
    assert shown == "Loading..."
    shows(page, _data_id(0))
    press(page, "1")
    shows(page, _data_id(1))
    all_saved(page)
    page.context.close()
    assert [row[:3] for row in _labels(app)] == [(ids[0], *LABELS["1"])]
