"""Several app servers on one PostgreSQL behave as one app: two `streamlit run server.py`
processes on different ports and two `python -m annotator worker` processes on one throwaway database, driven
through real headless Chromium. Sign-ins, claims, run progress and the Team figures go through the database: the
sign-in cookie's one-time code is redeemed by the other server, two annotators on two servers are never handed
the same candidate, a run started on one server runs on a worker and its progress shows on the other, and the
Team figures one server computed show at once on the other's first open."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect
from sqlalchemy import func, select

from annotator.accounts import auth
from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Annotation, Candidate, CandidateClaim, FigureSnapshot, Run
from annotator.labelling import browser_queue, labels
from tests.conftest import PROJECT_ROOT
from tests.e2e.conftest import RunningApp, fill_evaluate_form, start_app, stop_app
from tests.support.annotate_keys import all_saved
from tests.support.candidates import add_candidates, add_user
from tests.support.evaluation_items import add_evaluation_items, scripted_solver
from tests.support.openai_server import OpenAIServer
from tests.support.postgres import create_database, drop_database
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

PASSWORD = "correct horse"
TIMEOUT_MS = 60_000
ANNOTATE_READY = (
    "() => { const headings = [...document.querySelectorAll('h4')].map((h) => h.innerText);"
    " return headings.length > 0 && !headings.some((t) => t.startsWith('Loading')); }"
)


@dataclass
class Cluster:
    url: str
    a: RunningApp
    b: RunningApp
    workers: list[subprocess.Popen[bytes]]
    llm: OpenAIServer


@pytest.fixture(scope="module")
def cluster(postgres_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    logs = tmp_path_factory.mktemp("several-servers")
    name = f"t_{uuid.uuid4().hex[:12]}"
    url = create_database(postgres_url, name)
    engine = get_engine(url)  # the schema, before any server starts
    for person, role in (("boss", "admin"), ("rev", "reviewer"), ("ann", "annotator"), ("bea", "annotator")):
        add_user(engine, person, role=role, password=PASSWORD)
    add_evaluation_items(engine)
    # Enough that each annotator's browser holds its candidates ahead (`browser_queue.AHEAD`) and both have work.
    ids = add_candidates(engine, 2 * (browser_queue.AHEAD + 1) + 8, data_source="gsm")
    _label_for_team(engine, ids[-4:])  # complete now: the queue hands out the others
    environment = {**os.environ, "ANNOTATOR_DATABASE_URL": url, "E2E_RUN_KEY": "sk-test"}
    with OpenAIServer(answer=scripted_solver) as llm:
        workers = [
            subprocess.Popen([sys.executable, "-m", "annotator", "worker", "--kinds", "evaluate", "--poll", "0.1"],
                             env=environment, cwd=PROJECT_ROOT, stdout=(logs / f"worker-{i}.log").open("wb"),
                             stderr=subprocess.STDOUT)
            for i in range(2)
        ]
        apps: list[RunningApp] = []
        try:
            apps = [start_app(url, logs / f"app-{side}.log", script="server.py", env={"E2E_RUN_KEY": "sk-test"})
                    for side in "ab"]
            wait_for(lambda: _live_workers(url) == 2, 60, "both workers to report for work")
            yield Cluster(url, apps[0], apps[1], workers, llm)
        finally:
            llm.release()
            for app in apps:
                stop_app(app)
            for worker in workers:
                worker.terminate()
                worker.wait(timeout=30)
            engine.dispose()
            drop_database(postgres_url, name)


def _label_for_team(engine, candidate_ids: list[int]) -> None:  # type: ignore[no-untyped-def]
    """Labels by ann and bea for the Team figures."""
    with write_session(engine) as session:
        for name, checks in (("ann", (1, 1, 0, 1)), ("bea", (1, 0, 0, 1))):
            person = auth.account_id(session, name=name)
            assert person is not None
            for candidate_id, check in zip(candidate_ids, checks):
                labels.record_label(session, candidate_id=candidate_id, annotator_id=person, human_check=check,
                                    difficulty_eval=0 if check else None, seconds_spent=12.0)


def _live_workers(url: str) -> int:
    from annotator.runs.health import live_workers

    with read_session(get_engine(url)) as session:
        return len(live_workers(session))


def _sign_in(page, url: str, name: str) -> None:  # type: ignore[no-untyped-def]
    """Sign in on the start page (Annotate) and wait until it shows its candidate."""
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("textbox", name="Password").press("Enter")
    page.wait_for_function(ANNOTATE_READY)


def _go(page, link: str, title: str) -> None:  # type: ignore[no-untyped-def]
    page.get_by_role("link", name=link).click()
    page.locator(".aq-root").wait_for(state="detached")  # Annotate's workspace is gone
    page.get_by_role("heading", name=title, exact=True).wait_for()


def _started(page, url: str) -> None:  # type: ignore[no-untyped-def]
    """Wait for "Run 1 started."; when it never shows, fail with what the page and the runs table say instead (a
    refusal, a run that already ended)."""
    try:
        page.get_by_text("Run 1 started.").wait_for()
    except PlaywrightTimeout:
        with read_session(get_engine(url)) as session:
            rows = [(run.id, run.status, run.message) for run in session.execute(select(Run)).scalars()]
        pytest.fail(f'"Run 1 started." did not show. The page says {page.get_by_role("alert").all_inner_texts()}; '
                    f"the runs: {rows}")


def _shown(page) -> str:  # type: ignore[no-untyped-def]
    """The data_id of the candidate Annotate shows (its heading is `data_id · source · type`)."""
    return page.locator("h4").filter(has_text=" · ").first.inner_text().split(" · ")[0]


def test_a_sign_in_code_issued_on_one_server_is_redeemed_on_the_other(cluster: Cluster, browser) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context()
    page = context.new_page()
    # A proxy that is not sticky for plain HTTP: the page on A posts its code, and it reaches B.
    page.route(f"{cluster.a.url}/_annotator/session",
               lambda route: route.continue_(url=f"{cluster.b.url}/_annotator/session"))
    with page.expect_response(re.compile(r"/_annotator/session$")) as answered:
        _sign_in(page, cluster.a.url, "ann")
    assert answered.value.status == 204
    assert "annotator_session" in {cookie["name"] for cookie in context.cookies()}
    code = re.search(r'body: "([A-Za-z0-9_-]+)"', page.content())
    assert code is not None
    for server in (cluster.a, cluster.b):  # spent, on every server
        assert context.request.post(f"{server.url}/_annotator/session", data=code.group(1)).status == 403
    # A new browser session on B signs in from the cookie B set.
    other = context.new_page()
    other.set_default_timeout(TIMEOUT_MS)
    other.goto(cluster.b.url)
    other.get_by_text("Signed in as ann (annotator)").wait_for()
    context.close()


def test_claims_from_two_servers_never_hand_two_annotators_one_candidate(cluster: Cluster, browser) -> None:  # type: ignore[no-untyped-def]
    contexts = [browser.new_context(), browser.new_context()]
    pages = [context.new_page() for context in contexts]
    for page, server, name in zip(pages, (cluster.a, cluster.b), ("ann", "bea")):
        _sign_in(page, server.url, name)
    shown: list[list[str]] = [[_shown(page)] for page in pages]
    for _ in range(3):  # each labels what they were handed (key 1), in turn, and is handed the next
        for page, seen in zip(pages, shown):
            page.keyboard.press("1")
            page.wait_for_function(
                "(before) => { const h = [...document.querySelectorAll('h4')].find((e) => e.innerText.includes(' · '));"
                " return h && !h.innerText.startsWith(before + ' ·'); }", arg=seen[-1])
            seen.append(_shown(page))
    for page in pages:
        all_saved(page)
    everything = shown[0] + shown[1]
    assert len(set(everything)) == len(everything), shown
    engine = get_engine(cluster.url)
    with read_session(engine) as session:
        per_candidate = session.execute(
            select(func.count()).select_from(Annotation).join(Candidate, Candidate.id == Annotation.candidate_id)
            .where(Candidate.data_id.in_(everything)).group_by(Annotation.candidate_id)).scalars().all()
        claims = session.execute(select(CandidateClaim.candidate_id)).scalars().all()
    assert sorted(per_candidate) == [1] * 6  # the six labelled, once each
    assert len(claims) == len(set(claims))  # no candidate held by two people
    for context in contexts:
        context.close()


def test_a_run_started_on_one_server_runs_on_a_worker_and_its_progress_shows_on_the_other(  # type: ignore[no-untyped-def]
    cluster: Cluster, browser
) -> None:
    cluster.llm.hold_after(2)  # two answers, then the run waits (running) until released
    on_a, on_b = browser.new_context().new_page(), browser.new_context().new_page()
    _sign_in(on_a, cluster.a.url, "boss")
    _go(on_a, "Evaluate", "Evaluate a model")
    fill_evaluate_form(on_a, cluster.llm.url)
    on_a.get_by_role("button", name="Start run").click()
    _started(on_a, cluster.url)

    _sign_in(on_b, cluster.b.url, "boss")
    _go(on_b, "Evaluate", "Evaluate a model")
    on_b.get_by_text(re.compile(r"^Run 1: running, [1-9] of [1-9]\d* responses done")).wait_for()
    with read_session(get_engine(cluster.url)) as session:
        run = session.get(Run, 1)
        assert run is not None
        # Run by one of the workers, not by a process either app server started.
        assert run.pid in {worker.pid for worker in cluster.workers}
        assert any(f":{worker.pid}:" in (run.worker or "") for worker in cluster.workers)
    cluster.llm.release()
    wait_for(lambda: _status(cluster.url, 1) == "succeeded", 120, "the run to finish")
    on_b.get_by_text(re.compile(r"^Run 1: running")).wait_for(state="detached")
    on_a.context.close()
    on_b.context.close()


def _status(url: str, run_id: int) -> str | None:
    with read_session(get_engine(url)) as session:
        run = session.get(Run, run_id)
        return None if run is None else run.status


def _items(page):  # type: ignore[no-untyped-def]
    """The values of the Team page's "Items" figures, one per label (human_check, difficulty_eval), in page order."""
    label = page.locator("[data-testid=stMetricLabel]").filter(has_text=re.compile(r"^Items$"))
    return page.locator("[data-testid=stMetric]").filter(has=label).locator("[data-testid=stMetricValue]")


def _stored(url: str) -> tuple[int, object]:
    with read_session(get_engine(url)) as session:
        row = session.get(FigureSnapshot, "team")
        assert row is not None
        return row.generation, row.computed_at


def test_team_figures_computed_on_one_server_show_at_once_on_the_other(cluster: Cluster, browser) -> None:  # type: ignore[no-untyped-def]
    on_a, on_b = browser.new_context().new_page(), browser.new_context().new_page()
    _sign_in(on_b, cluster.b.url, "rev")  # B is up and signed in, Team not opened there yet
    _sign_in(on_a, cluster.a.url, "rev")
    _go(on_a, "Team", "Team")
    expect(_items(on_a)).to_have_count(2, timeout=TIMEOUT_MS)  # both labels' blocks rendered: the page is whole
    items = _items(on_a).all_inner_texts()
    computed = _stored(cluster.url)
    assert computed[0] >= 1
    clicked = time.monotonic()
    _go(on_b, "Team", "Team")
    # Retried until B's page has rendered them: one read could catch it mid-render (it once saw "2" for "10").
    expect(_items(on_b)).to_have_text(items, timeout=TIMEOUT_MS)
    print(f"B's first Team open showed the stored figures {time.monotonic() - clicked:.2f} s after the click")
    caption = on_b.get_by_text(re.compile(r"^Figures from \d+ s ago")).first
    caption.wait_for()
    assert "being computed" not in caption.inner_text()
    assert _stored(cluster.url) == computed  # B computed nothing: it showed A's figures
    on_a.context.close()
    on_b.context.close()
