"""Re-judging stored transcripts: both rule sets, the rule and version stored, a process pool for big jobs,
and a caller off the main thread (as Streamlit and background runs are)."""

from __future__ import annotations

import sys
import threading
import types
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from annotator.database.engine import read_session
from annotator.database.models import Transcript
from annotator.import_export import importer
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from annotator.transcripts.collect import storing
from annotator.transcripts.judge import verdicts
from annotator.transcripts.judge.verdicts import judge_transcripts
from tests.support.transcripts import import_records, records_for

COLUMNS = (Transcript.id, Transcript.extracted_answer, Transcript.judge_rule, Transcript.judge_version,
           Transcript.judge_class, Transcript.judge, Transcript.rules_disagree)


@pytest.fixture
def judged(engine: Engine, shared_data: Path, tmp_path: Path) -> Engine:
    release = shared_data / "reliablemath"
    import_parts([*read(release / "solve" / "aime.json"), *read(release / "unsol" / "aime.json")], engine=engine)
    records = records_for(engine, data_source="aime", model="m", prompt="reliable", a=(10, 5, 15), u=(40, 12, 80))
    # Phrasings the two rule sets read differently: a capitalised refusal and a straight apostrophe.
    records[0]["response"] = "\\boxed{Sorry, I don't know}"
    records[-1]["response"] = "\\boxed{It's Unsolvable}"
    import_records(engine, tmp_path / "m.jsonl", records)
    return engine


def _stored(engine: Engine) -> list[tuple[object, ...]]:
    with read_session(engine) as session:
        return [tuple(row) for row in session.execute(select(*COLUMNS).order_by(Transcript.id))]


def test_rejudging_with_the_reference_rule_stores_its_name_and_verdicts(judged: Engine) -> None:
    default = _stored(judged)
    assert {row[2:4] for row in default} == {("reliablemath", "1")}
    assert [row[0] for row in default if row[6]] == [default[0][0], default[-1][0]]  # the two phrasings
    summary = judge_transcripts(judged, rule="reliablemath-exact")
    exact = _stored(judged)
    assert summary.judged == len(exact) == 162 and summary.rules_disagree == 2
    assert {row[2:4] for row in exact} == {("reliablemath-exact", "1")}
    # Only the two phrasings change: the refusal becomes a failure on the solvable item, and so does
    # "It's Unsolvable" on the unsolvable one.
    changed = [(old[5], new[5]) for old, new in zip(default, exact) if old[5] != new[5]]
    assert changed == [("R", "F"), ("S", "F")]
    # A: an S became the refusal (F under this rule); U: an F became "It's Unsolvable" (F again).
    assert summary.verdicts == {"S": 9 + 40, "R": 5 + 12, "F": 16 + 80}


def test_a_process_pool_gives_the_same_verdicts(
    judged: Engine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    in_process = _stored(judged)
    # Smaller thresholds and chunk than the defaults, so that the pairs of 162 transcripts go through two workers.
    monkeypatch.setattr(verdicts, "PARALLEL_MIN", 10)
    monkeypatch.setattr(verdicts, "CHUNK", 3)
    # As in a Streamlit server: the page being run is `__main__`; a worker that ran it again would die.
    page = tmp_path / "page.py"
    page.write_text("raise SystemExit('a judge worker ran the page')\n", encoding="utf-8")
    script = types.ModuleType("__main__")
    script.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", script)
    summary = judge_transcripts(judged, workers=2)
    assert summary.judged == 162 and _stored(judged) == in_process
    assert sys.modules["__main__"] is script


def test_an_import_asks_the_pool_once_and_stores_the_same_verdicts(
    engine: Engine, shared_data: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 20 item 1: a big import starts math-verify on all its (gold, answer) pairs at once and judges each
    batch as it stores it (rows whose pairs are not answered yet are given their verdicts at the end); the
    verdicts are those of judging in this process."""
    release = shared_data / "reliablemath"
    import_parts([*read(release / "solve" / "aime.json"), *read(release / "unsol" / "aime.json")], engine=engine)
    records = records_for(engine, data_source="aime", model="m", prompt="reliable", a=(10, 5, 15), u=(40, 12, 80))
    records[0]["response"] = "\\boxed{Sorry, I don't know}"
    monkeypatch.setattr(importer, "BATCH_SIZE", 30)  # five batches of 30 and one of 12
    monkeypatch.setattr(verdicts, "PARALLEL_MIN", 50)  # 162 transcripts: the pool opens
    monkeypatch.setattr(verdicts, "CHUNK", 3)
    asked: list[tuple[int, int]] = []
    ask_pairs = verdicts.PairVerifier.ask_pairs

    def counting_ask(self: verdicts.PairVerifier, pairs):  # type: ignore[no-untyped-def]
        pairs = list(pairs)
        asked.append((len(pairs), len(self.workers)))
        return ask_pairs(self, pairs)

    monkeypatch.setattr(verdicts.PairVerifier, "ask_pairs", counting_ask)
    import_records(engine, tmp_path / "m.jsonl", records)
    # once, by the pool, before the first batch is stored; the batches ask nothing new
    assert len(asked) == 1 and asked[0][0] > 0 and asked[0][1] >= 2
    pooled = _stored(engine)
    assert len(pooled) == 162 and all(row[5] is not None for row in pooled)
    assert {row[5] for row in pooled} == {"S", "R", "F"}
    summary = judge_transcripts(engine, workers=1)
    assert summary.judged == 162 and _stored(engine) == pooled


def test_rows_stored_before_math_verify_answers_get_their_verdicts_at_the_end(
    engine: Engine, shared_data: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """When no answer of math-verify is in while the batches are stored (a slow pool), the rows that need one go
    in without a verdict and are updated by their key before the import commits."""
    release = shared_data / "reliablemath"
    import_parts([*read(release / "solve" / "aime.json"), *read(release / "unsol" / "aime.json")], engine=engine)
    records = records_for(engine, data_source="aime", model="m", prompt="reliable", a=(10, 5, 15), u=(40, 12, 80))
    monkeypatch.setattr(importer, "BATCH_SIZE", 30)
    monkeypatch.setattr(verdicts, "PARALLEL_MIN", 50)
    monkeypatch.setattr(verdicts.PairVerifier, "ready", lambda self: {})  # nothing answered until `known`
    stored: list[int] = []
    insert = storing.insert_transcripts

    def counting_insert(session, *, verdicts, **kwargs):  # type: ignore[no-untyped-def]
        stored.append(sum(fields["judge"] is None for fields in verdicts))
        return insert(session, verdicts=verdicts, **kwargs)

    monkeypatch.setattr(storing, "insert_transcripts", counting_insert)
    import_records(engine, tmp_path / "m.jsonl", records)
    assert sum(stored) > 0  # some rows went in without a verdict
    pooled = _stored(engine)
    assert len(pooled) == 162 and all(row[5] is not None for row in pooled)
    summary = judge_transcripts(engine, workers=1)
    assert summary.judged == 162 and _stored(engine) == pooled


def test_judging_off_the_main_thread(judged: Engine) -> None:
    before = _stored(judged)
    with read_session(judged) as session:
        some = [row[0] for row in session.execute(select(Transcript.id).order_by(Transcript.id).limit(20))]
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["summary"] = judge_transcripts(judged, transcript_ids=some)
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert "error" not in outcome and outcome["summary"].judged == 20  # type: ignore[attr-defined]
    assert _stored(judged) == before


def test_an_unknown_rule_is_refused_before_anything_changes(judged: Engine) -> None:
    before = _stored(judged)
    with pytest.raises(ValueError, match="unknown judge rule 'loose'"):
        judge_transcripts(judged, rule="loose")
    assert _stored(judged) == before
