"""Every value has a range (`annotator.settings.limits`): settings refused out of range store nothing, and a bad value
already stored (an older version's, or written by hand) is read as the default instead of breaking a page."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from annotator import transcripts
from annotator.database import queries
from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Setting
from annotator.labelling import gold, queue
from annotator.settings import limits
from tests.support import queue_component
from tests.support.candidates import add_candidates
from tests.support.pages import open_page


def test_a_range_names_the_value_and_the_range() -> None:
    with pytest.raises(limits.RangeError) as refused:
        limits.SAMPLES.check(0)
    assert str(refused.value) == "--samples must be a whole number from 1 to 100, got 0"
    assert "from 0 to 2, got nan" in str(pytest.raises(limits.RangeError, limits.TEMPERATURE.check, float("nan")).value)
    for bad in (True, "3", 2.5, None, 10**30, -1):
        assert not limits.LABELS_PER_CANDIDATE.contains(bad)
    assert limits.LABELS_PER_CANDIDATE.check(20) == 20
    assert limits.DAYS.contains(0.5) and not limits.DAYS.contains(0)


def _stored(engine: Engine) -> dict[str, object]:
    with read_session(engine) as session:
        return {row.key: row.value for row in session.execute(select(Setting.key, Setting.value))}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: queue.set_labels_per_candidate(s, value=0), "labels_per_candidate must be a whole number from 1"),
        (lambda s: queue.set_labels_per_candidate(s, value=2**40), "from 1 to 20, got 1099511627776"),
        (lambda s: gold.set_gold_every(s, value=-3), "gold_every must be a whole number from 0 to 1,000, got -3"),
        (lambda s: gold.set_gold_every(s, value=10**12), "gold_every"),
        (lambda s: gold.set_gold_every(s, value=1), "0 (off) or at least 2"),
        (lambda s: transcripts.set_tags(s, tags=[f"t{i}" for i in range(10)]), "1 to 9 tags"),
        (lambda s: transcripts.set_tags(s, tags=["x" * 101]), "at most 100 characters"),
    ],
)
def test_settings_out_of_range_are_refused_and_nothing_is_stored(engine: Engine, change, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        with write_session(engine) as session:
            change(session)
    assert _stored(engine) == {}


@pytest.mark.parametrize("bad", ["abc", 0, -5, 2**40, 2.5, [3], {"n": 3}, True])
def test_a_bad_stored_setting_reads_as_the_default_and_is_reported(engine: Engine, bad: object) -> None:
    with write_session(engine) as session:
        # As an older version or a hand-edited database could have left them.
        queries.set_setting(session, key=queue.LABELS_PER_CANDIDATE, value=bad)
        queries.set_setting(session, key=gold.GOLD_EVERY, value=bad)
        queries.set_setting(session, key="review_tags", value=bad)
    with read_session(engine) as session:
        assert queue.labels_per_candidate(session) == 1
        assert gold.gold_every(session) == (0 if bad == 0 and bad is not False else gold.DEFAULT_GOLD_EVERY)
        assert transcripts.get_tags(session) == list(transcripts.DEFAULT_TAGS)
        problem = queries.setting_problem(session, key=queue.LABELS_PER_CANDIDATE, allowed=limits.LABELS_PER_CANDIDATE)
    assert problem is not None and "is not a whole number from 1 to 20" in problem


def test_annotate_still_works_for_everyone_with_a_bad_stored_setting(tmp_path: Path) -> None:
    engine = get_engine(f"sqlite:///{tmp_path / 'a.sqlite'}")
    add_candidates(engine, 2)
    with write_session(engine) as session:
        queries.set_setting(session, key=queue.LABELS_PER_CANDIDATE, value="three")
        queries.set_setting(session, key=gold.GOLD_EVERY, value=-1)
    app = open_page("annotate", engine, name="ann", role="annotator")
    app.run()
    assert not app.exception, app.exception
    assert queue_component.headings(app)[0].startswith("math_0_remove_1")
