from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, select, update

from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Annotation, AnnotationEvent, Annotator, Candidate, utcnow
from annotator.labelling import browse, queue, queue_progress
from tests.conftest import PROJECT_ROOT
from tests.support.candidates import add_candidates, add_user


def _next(engine: Engine, annotator_id: int, **filters: object) -> int | None:
    with write_session(engine) as session:
        return queue.claim_next(session, annotator_id=annotator_id, **filters)  # type: ignore[arg-type]


def _decide(engine: Engine, annotator_id: int, candidate_id: int, human_check: int = 1, difficulty: int | None = 0,
            comment: str | None = None) -> None:
    with write_session(engine) as session:
        queue.decide(session, annotator_id=annotator_id, candidate_id=candidate_id, human_check=human_check,
                     difficulty_eval=difficulty, comment=comment)


def test_one_label_per_candidate_and_no_two_annotators_on_the_same_one(engine: Engine) -> None:
    ids = add_candidates(engine, 4)
    ann, bob = add_user(engine, "ann"), add_user(engine, "bob")
    assert _next(engine, ann.id) == ids[0]
    # Reloading (asking again) resumes on the held candidate; another annotator gets the next one.
    assert _next(engine, ann.id) == ids[0]
    assert _next(engine, bob.id) == ids[1]
    _decide(engine, ann.id, ids[0])
    assert _next(engine, ann.id) == ids[2]
    _decide(engine, bob.id, ids[1], 0, None)
    # ids[0] and ids[1] have their one label: nobody gets them again.
    assert _next(engine, bob.id) == ids[3]
    _decide(engine, ann.id, ids[2])
    _decide(engine, bob.id, ids[3])
    assert _next(engine, ann.id) is None
    with read_session(engine) as session:
        counts = dict(session.execute(select(Candidate.id, Candidate.label_count)).all())
        progress = queue_progress.count(session, annotator_id=ann.id)
        assert (progress.mine_done, progress.total, progress.done, progress.labels_per_candidate) == (2, 4, 4, 1)
    assert counts == dict.fromkeys(ids, 1)


def test_labels_per_candidate_setting(engine: Engine) -> None:
    ids = add_candidates(engine, 2)
    users = [add_user(engine, name) for name in ("a", "b", "c")]
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
    # Two annotators may hold the same candidate, not three.
    assert _next(engine, users[0].id) == ids[0]
    assert _next(engine, users[1].id) == ids[0]
    assert _next(engine, users[2].id) == ids[1]
    _decide(engine, users[0].id, ids[0])
    _decide(engine, users[1].id, ids[0])
    # ids[0] is done; a does not get a candidate it labelled; fewest labels first.
    assert _next(engine, users[0].id) == ids[1]
    _decide(engine, users[2].id, ids[1])
    _decide(engine, users[0].id, ids[1])
    assert _next(engine, users[1].id) is None
    with read_session(engine) as session:
        assert queue_progress.count(session, annotator_id=users[0].id).done == 2


def test_expired_claims_free_the_candidate(engine: Engine) -> None:
    ids = add_candidates(engine, 1)
    ann, bob = add_user(engine, "ann"), add_user(engine, "bob")
    assert _next(engine, ann.id) == ids[0]
    assert _next(engine, bob.id) is None
    later = utcnow() + timedelta(minutes=queue.CLAIM_MINUTES + 1)
    with write_session(engine) as session:
        assert queue.claim_next(session, annotator_id=bob.id, now=later) == ids[0]


def test_filters_skip_and_filtered_status(engine: Engine) -> None:
    aime = add_candidates(engine, 2, data_source="aime")
    math = add_candidates(engine, 2, data_source="math")
    hidden = add_candidates(engine, 1, data_source="amc", status="filtered")
    ann = add_user(engine, "ann")
    assert _next(engine, ann.id, data_source="math") == math[0]
    assert _next(engine, ann.id, data_source="math", rewrite_type="contradict") == math[1]
    # Without filters the held candidate is resumed, unless it was skipped; skipped ones are excluded.
    assert _next(engine, ann.id) == math[1]
    assert _next(engine, ann.id, exclude=[math[1], aime[0]]) == aime[1]
    assert _next(engine, ann.id, data_source="amc") is None
    assert _next(engine, ann.id, data_source="amc", include_filtered=True) == hidden[0]
    with read_session(engine) as session:
        assert queue.filter_options(session) == {
            "data_source": ["aime", "amc", "math"], "rewrite_type": ["contradict", "remove"]
        }
        assert queue_progress.count(session, annotator_id=ann.id, data_source="math").total == 2


def test_unverified_candidates_wait_outside_the_queue_but_open_from_browse(engine: Engine) -> None:
    """ReliableMath Section 3.3: Step 3 (human check) takes the candidates that passed Step 2; a candidate of
    `generate --steps 1` has not, so the queue never hands it out, filtered ones included, until `--steps 2`."""
    waiting = add_candidates(engine, 2, data_source="aime", status="unverified")
    ready = add_candidates(engine, 1, data_source="aime", start=2)
    ann = add_user(engine, "ann")
    admin = add_user(engine, "boss", role="admin")
    assert _next(engine, ann.id) == ready[0]
    _decide(engine, ann.id, ready[0])
    assert _next(engine, ann.id) is None
    assert _next(engine, ann.id, include_filtered=True) is None
    with read_session(engine) as session:
        assert queue_progress.count(session, annotator_id=ann.id).total == 1
        view = queue.load(session, candidate_id=waiting[0], annotator_id=admin.id)
        assert view is not None and view["status"] == "unverified"
        page = browse.list_candidates(session, viewer=admin, data_source="aime")
        assert {row["id"] for row in page.rows} >= set(waiting)


def test_back_and_forward_through_my_labels_and_change_one(engine: Engine) -> None:
    ids = add_candidates(engine, 4)
    ann, bob = add_user(engine, "ann"), add_user(engine, "bob")
    for candidate_id in ids[:3]:
        assert _next(engine, ann.id) == candidate_id
        _decide(engine, ann.id, candidate_id)
    _decide(engine, bob.id, ids[3])  # someone else's label is not in my history
    with read_session(engine) as session:
        assert queue.previous_labelled(session, annotator_id=ann.id) == ids[2]
        assert queue.previous_labelled(session, annotator_id=ann.id, before_candidate_id=ids[2]) == ids[1]
        assert queue.previous_labelled(session, annotator_id=ann.id, before_candidate_id=ids[0]) is None
        assert queue.next_labelled(session, annotator_id=ann.id, after_candidate_id=ids[1]) == ids[2]
        assert queue.next_labelled(session, annotator_id=ann.id, after_candidate_id=ids[2]) is None
    _decide(engine, ann.id, ids[1], 0, None, comment="condition not changed")
    with read_session(engine) as session:
        view = queue.load(session, candidate_id=ids[1], annotator_id=ann.id)
        events = session.execute(
            select(AnnotationEvent.action, AnnotationEvent.old, AnnotationEvent.new)
            .where(AnnotationEvent.candidate_id == ids[1])
            .order_by(AnnotationEvent.id)
        ).all()
    assert view is not None
    assert view["my_label"] == {"human_check": 0, "difficulty_eval": None, "comment": "condition not changed"}
    assert view["human_check"] == 0 and view["label_count"] == 1
    assert [event.action for event in events] == ["create", "update"]
    assert events[1].old["human_check"] == 1 and events[1].new["human_check"] == 0


def test_load_falls_back_to_the_problem_question(engine: Engine) -> None:
    ids = add_candidates(engine, 1)
    ann = add_user(engine, "ann")
    with write_session(engine) as session:
        session.execute(update(Candidate).where(Candidate.id == ids[0]).values(question=None))
    with read_session(engine) as session:
        view = queue.load(session, candidate_id=ids[0], annotator_id=ann.id)
        assert queue.load(session, candidate_id=10_000, annotator_id=ann.id) is None
    assert view is not None
    assert view["question"].startswith("Problem math 0") and view["my_label"] is None


def _plan(engine: Engine, annotator_id: int, **filters: object) -> str:
    with read_session(engine) as session:
        query = queue.next_candidate_query(session, annotator_id=annotator_id, **filters)  # type: ignore[arg-type]
        sql = str(query.compile(engine, compile_kwargs={"literal_binds": True}))
        rows = session.connection().exec_driver_sql("EXPLAIN QUERY PLAN " + sql).all()
    return "\n".join(row[-1] for row in rows)


def test_the_next_candidate_is_an_index_walk_not_a_scan_and_sort(sqlite_engine: Engine) -> None:
    add_candidates(sqlite_engine, 3)
    ann = add_user(sqlite_engine, "ann")
    for target, imported_count in ((1, True), (3, True), (1, False), (3, False)):
        with write_session(sqlite_engine) as session:
            queue.set_labels_per_candidate(session, value=target)
            queue.set_imported_labels_count(session, value=imported_count)
        plan = _plan(sqlite_engine, ann.id)
        assert "ix_candidate_queue" in plan, plan
        assert "TEMP B-TREE" not in plan, plan
        # The per-candidate checks are primary-key / unique-index lookups.
        assert "SCAN annotation" not in plan and "SCAN candidateclaim" not in plan, plan


ROUNDS = 60  # per racing annotator


def _worker(url: str, annotator_id: int, rounds: int) -> None:
    """Claim, label, repeat; print every candidate this annotator was handed."""
    engine = get_engine(url)
    print("ready", flush=True)
    sys.stdin.readline()  # start barrier: all workers race from here
    for _ in range(rounds):
        candidate_id = _next(engine, annotator_id)
        if candidate_id is None:
            break
        print(candidate_id, flush=True)
        _decide(engine, annotator_id, candidate_id)


@pytest.mark.parametrize("labels_per_candidate", [1, 2])
def test_annotators_racing_for_work_never_get_the_same_candidate(database_url: str, labels_per_candidate: int) -> None:
    """Four annotators claim and label at the same moment: no candidate is handed to more annotators than
    `labels_per_candidate`, nor twice to one annotator (SKIP LOCKED and a check under the row lock on
    PostgreSQL, BEGIN IMMEDIATE on SQLite)."""
    engine = get_engine(database_url)
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=labels_per_candidate)
    # Enough rounds that the interleaving which once handed one candidate to two annotators on PostgreSQL
    # (a claim committed while another transaction's SKIP LOCKED query was running) happens in most runs.
    # Enough that the slowest annotator never runs out: the candidates it has not labelled (all but its ROUNDS)
    # must hold the other three annotators' labels and still one slot for it. With fewer, an annotator that
    # fell behind finds only candidates it labelled already (their second slot open) and stops early.
    add_candidates(engine, ROUNDS + 3 * ROUNDS // labels_per_candidate + 8)
    annotators = [add_user(engine, f"racer{i}").id for i in range(4)]
    code = (f"import sys; from tests.labelling.test_queue import _worker; "
            f"_worker(sys.argv[1], int(sys.argv[2]), {ROUNDS})")
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code, database_url, str(annotator_id)],
            cwd=PROJECT_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for annotator_id in annotators
    ]
    for process in processes:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready", process.stderr
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    outputs = [process.communicate(timeout=300) for process in processes]
    assert [p.returncode for p in processes] == [0] * 4, [err for _out, err in outputs]
    per_annotator = [[int(line) for line in out.split()] for out, _err in outputs]
    assert [len(mine) for mine in per_annotator] == [ROUNDS] * 4, "an annotator ran out of work"
    assert [len(set(mine)) for mine in per_annotator] == [ROUNDS] * 4, "an annotator got one candidate twice"
    handed = Counter(candidate_id for mine in per_annotator for candidate_id in mine)
    assert max(handed.values()) <= labels_per_candidate, handed.most_common(3)
    with read_session(engine) as session:
        counts = dict(session.execute(select(Candidate.id, Candidate.label_count)).all())
    assert {candidate_id: counts[candidate_id] for candidate_id in handed} == dict(handed)


def _imported_release(engine: Engine, tmp_path: Path, count: int) -> list[int]:
    """A release of `count` AIME candidates, each with the release's own label (import:reliablemath,
    human_check = 1), imported; the candidates' ids."""
    from tests.support.release import import_release

    release = tmp_path / "release"
    release.mkdir()
    solve = [{"data_source": "aime", "id": i, "question": f"Find $x$ if $x = {i}$.", "ground_truth": str(i)}
             for i in range(count)]
    unsol = [{"data_id": f"aime_{i}_remove_1", "question": row["question"], "rewritten_question": "Find $x$.",
              "ground_truth": row["ground_truth"], "difficulty_eval": 0} for i, row in enumerate(solve)]
    (release / "solve.json").write_text(json.dumps(solve, indent=4), encoding="utf-8")
    (release / "unsol.json").write_text(json.dumps(unsol, indent=4), encoding="utf-8")
    import_release(engine, release)
    with read_session(engine) as session:
        return list(session.execute(select(Candidate.id).order_by(Candidate.id)).scalars())


def _work_through(engine: Engine, people: list[int]) -> None:
    """Each person in turn claims and accepts the next candidate, until the queue has nothing for anyone."""
    waiting = list(people)
    while waiting:
        for person in list(waiting):
            candidate_id = _next(engine, person)
            if candidate_id is None:
                waiting.remove(person)
            else:
                _decide(engine, person, candidate_id)


def _people_per_candidate(engine: Engine) -> dict[int, set[int]]:
    with read_session(engine) as session:
        rows = session.execute(select(Annotation.candidate_id, Annotation.annotator_id)
                               .join(Annotator, Annotator.id == Annotation.annotator_id)
                               .where(Annotator.is_system.is_(False))).all()
    people: dict[int, set[int]] = {}
    for candidate_id, annotator_id in rows:
        people.setdefault(candidate_id, set()).add(annotator_id)
    return people


def _what_everyone_says(engine: Engine, out: Path) -> dict[str, object]:
    """Completeness and vetted as the queue's progress, Browse, stats and the release export count them."""
    from annotator.figures import stats
    from annotator.import_export.exports import export
    from tests.support.candidates import add_user as add_account

    admin = add_account(engine, f"admin{len(list(out.parent.iterdir()))}", role="admin")
    manifest = export("reliablemath", out, engine=engine)
    with read_session(engine) as session:
        progress = queue_progress.count(session, annotator_id=admin.id)
        counted = stats.compute(session)["total"]
        states = Counter(row["state"] for row in browse.list_candidates(session, viewer=admin, page_size=100).rows)
        vetted = browse.list_candidates(session, viewer=admin, label_state="vetted").total
    return {"done": progress.done, "total": progress.total, "states": dict(states), "browse_vetted": vetted,
            "stats_vetted": counted["vetted"], "stats_incomplete": counted["incomplete"],
            "released": len(json.loads((out / "unsol.json").read_text(encoding="utf-8"))),
            "left_out": manifest["vetted"]["left_out"]}


def test_with_imported_labels_not_counting_each_candidate_gets_two_of_the_teams_people(
        engine: Engine, tmp_path: Path) -> None:
    """A team re-checks an imported release with labels_per_candidate = 2 and imported labels not counting: the
    release's own label fills no slot, so every candidate reaches two of the team's people and annotators
    overlap; the queue, the progress, Browse, stats and the release agree on what is complete and vetted."""
    ids = _imported_release(engine, tmp_path, 6)
    people = [add_user(engine, name).id for name in ("ann", "bob", "cat")]
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
        queue.set_imported_labels_count(session, value=False)
    before = _what_everyone_says(engine, tmp_path / "before")
    assert before == {"done": 0, "total": 6, "states": {"in progress": 6}, "browse_vetted": 0, "stats_vetted": 0,
                      "stats_incomplete": 6, "released": 0, "left_out": 6}

    _work_through(engine, people)
    reached = _people_per_candidate(engine)
    assert {candidate_id: len(who) for candidate_id, who in reached.items()} == dict.fromkeys(ids, 2)
    shared = Counter(tuple(sorted(who)) for who in reached.values())
    assert len(shared) >= 2 and sum(shared.values()) == 6  # pairs of annotators label the same candidates
    with read_session(engine) as session:
        counts = session.execute(select(Candidate.label_count, Candidate.imported_label_count)).all()
    assert set(counts) == {(3, 1)}
    after = _what_everyone_says(engine, tmp_path / "after")
    assert after == {"done": 6, "total": 6, "states": {"complete": 6}, "browse_vetted": 6, "stats_vetted": 6,
                     "stats_incomplete": 0, "released": 6, "left_out": 0}


def test_with_imported_labels_counting_the_release_fills_one_slot_of_two(engine: Engine, tmp_path: Path) -> None:
    """The default: the release's own label is one of the two, so every candidate goes to one person only and no
    two annotators share one."""
    ids = _imported_release(engine, tmp_path, 6)
    people = [add_user(engine, name).id for name in ("ann", "bob", "cat")]
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
        assert queue.imported_labels_count(session) is True
    assert _what_everyone_says(engine, tmp_path / "before")["states"] == {"in progress": 6}
    _work_through(engine, people)
    assert {candidate_id: len(who) for candidate_id, who in _people_per_candidate(engine).items()} == dict.fromkeys(
        ids, 1)
    after = _what_everyone_says(engine, tmp_path / "after")
    assert after == {"done": 6, "total": 6, "states": {"complete": 6}, "browse_vetted": 6, "stats_vetted": 6,
                     "stats_incomplete": 0, "released": 6, "left_out": 0}


def test_turning_imported_labels_off_reopens_an_imported_release(engine: Engine, tmp_path: Path) -> None:
    """With k = 1 an imported release is vetted as released; not counting imported labels, each candidate waits for
    one person of the team, and a stored value that is not true or false reads as the default."""
    from annotator.database import queries

    _imported_release(engine, tmp_path, 2)
    ann = add_user(engine, "ann")
    assert _next(engine, ann.id) is None
    with write_session(engine) as session:
        queue.set_imported_labels_count(session, value=False)
    assert _next(engine, ann.id) is not None
    with write_session(engine) as session:
        queries.set_setting(session, key=queue.IMPORTED_LABELS_COUNT, value="no")
        assert queue.imported_labels_count(session) is True
