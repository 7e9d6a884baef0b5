"""Put problems, candidates and accounts into a real database for queue, page and browser tests."""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from typing import Any

from sqlalchemy import Engine, insert, select
from sqlmodel import Session

from annotator.accounts import auth, passwords
from annotator.database.engine import write_session
from annotator.database.models import Annotator, Candidate, Problem, utcnow
from annotator.labelling._label_writer import _chunks, _resolved_labels


def add_candidates(
    engine: Engine,
    count: int,
    *,
    data_source: str = "math",
    rewrite_types: tuple[str, ...] = ("remove", "contradict"),
    status: str = "pending",
    start: int = 0,
    extra: dict[str, Any] | None = None,
    llm_outputs: dict[str, Any] | None = None,
    rewritten_question: str | None = None,
) -> list[int]:
    """`count` candidates (one problem each), data_ids `{data_source}_{i}_{type}_1`; returns their ids in order."""
    now = utcnow()
    with write_session(engine) as session:
        problem_rows = [
            {
                "data_source": data_source,
                "position": start + i,
                "source_id": start + i,
                "question": (
                    f"Problem {data_source} {start + i}: let $x > {start + i}$. Find $x^2$ when $x = {start + i + 1}$."
                ),
                "ground_truth": str((start + i + 1) ** 2),
                "created_at": now,
            }
            for i in range(count)
        ]
        session.execute(insert(Problem), problem_rows)
        problem_ids = session.execute(
            select(Problem.id)
            .where(Problem.data_source == data_source, Problem.position >= start, Problem.position < start + count)
            .order_by(Problem.position)
        ).scalars().all()
        rows = []
        for i, problem_id in enumerate(problem_ids):
            rewrite_type = rewrite_types[i % len(rewrite_types)]
            rows.append(
                {
                    "problem_id": problem_id,
                    "data_id": f"{data_source}_{start + i}_{rewrite_type}_1",
                    "data_source": data_source,
                    "rewrite_type": rewrite_type,
                    "condition_index": 1,
                    "extracted_condition": f"$x = {start + i + 1}$",
                    "rewritten_question": rewritten_question
                    or f"Problem {data_source} {start + i}: let $x > {start + i}$. Find $x^2$.",
                    "rewritten_condition": f"removed $x = {start + i + 1}$",
                    "unsolvable_reason": f"Without $x = {start + i + 1}$ the value of $x$ is unknown.",
                    "ground_truth": str((start + i + 1) ** 2),
                    "extra": extra,
                    "llm_outputs": llm_outputs,
                    "status": status,
                    "position": start + i,
                    "label_count": 0,
                    "created_at": now,
                    "updated_at": now,
                }
            )
        session.execute(insert(Candidate), rows)
        return list(
            session.execute(
                select(Candidate.id).where(Candidate.problem_id.in_(problem_ids)).order_by(Candidate.id)
            ).scalars()
        )


def store_resolved_labels(session: Session, candidate_ids: Collection[int]) -> None:
    """These candidates' label count, resolved label and its source, by the label writer's own statement: for
    seeds that insert labels with Core (`labels.record_labels` stores them itself)."""
    connection = session.connection()
    now = utcnow()
    for chunk in _chunks(candidate_ids):
        connection.execute(_resolved_labels(chunk, now=now, unlabelled=False, dialect=connection.dialect.name))


def add_user(
    engine: Engine, name: str, *, role: str = "annotator", password: str = "pw-" + "secret-long-enough"
) -> auth.User:
    """An account made by `auth.create_user` (its checks, its row), whose password hash is made once per process and
    password: hashing is slow on purpose, and a salted hash verifies the same password whichever account stores it.
    (tests/accounts/ has `create_user` hash each account's own.)"""
    passwords.check(password, name=name)
    with write_session(engine) as session:
        # Made as an account of the identity provider (no hash to make), then given the password's hash.
        user = auth.create_user(session, name=name, role=role, oidc_subject=f"{_NO_SUBJECT}{name}")
        annotator = session.get(Annotator, user.id)
        assert annotator is not None
        annotator.oidc_subject = None
        annotator.password_hash = _password_hash(password)
    return user


_NO_SUBJECT = "add-user-without-subject:"


@cache
def _password_hash(password: str) -> str:
    return auth.hash_password(password)


def add_vetted_and_incomplete(engine: Engine) -> list[int]:
    """With labels_per_candidate = 2: one candidate with two labels of human_check = 1 (vetted) and one with a single
    such label (incomplete); their ids."""
    from annotator.labelling import labels, queue

    ids = add_candidates(engine, 2, rewrite_types=("remove",))
    ann, bea = add_user(engine, "ann"), add_user(engine, "bea")
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
        for candidate_id, who in ((ids[0], ann), (ids[0], bea), (ids[1], ann)):
            labels.record_label(session, candidate_id=candidate_id, annotator_id=who.id, human_check=1,
                                difficulty_eval=0)
    return ids


def sign_in_app(app: Any, engine: Engine, user: auth.User) -> Any:
    """Put a real sign-in of `user` into an AppTest's session state, as app.py does after the sign-in form.

    Callbacks that change data re-check the sign-in against the database (`ui.guard.permitted`), so a user
    object alone, with no token behind it, is signed out there.
    """
    with write_session(engine) as session:
        token = auth.start_sign_in(session, user=user)
    app.session_state["engine"] = engine
    app.session_state["user"] = user
    app.session_state["auth_token"] = token
    app.session_state["auth_recheck_at"] = 0.0
    return app
