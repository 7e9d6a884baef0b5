"""Every judge against the reviewers (issue 20 item 3; UMWP Table 3's layout): kappa, reviewed count, confusion
matrix per rule set, each rule applied afresh to the same reviewed responses."""

from __future__ import annotations

from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix
from sqlalchemy import Engine, select

from annotator.database.engine import read_session, write_session
from annotator.database.models import Judgement, Transcript
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from annotator.transcripts import record_review
from annotator.transcripts.report.judges import VERDICTS, judge_agreement, judge_row
from tests.support.candidates import add_user
from tests.support.transcripts import import_records, records_for


def test_each_rule_against_the_reviewers(engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    release = shared_data / "reliablemath"
    import_parts([*read(release / "solve" / "aime.json"), *read(release / "unsol" / "aime.json")], engine=engine)
    records = records_for(engine, data_source="aime", model="m", prompt="reliable", a=(10, 5, 15), u=(40, 12, 80))
    # The reference rule reads a capitalised refusal as a failure; ours as a refusal.
    records[0]["response"] = "\\boxed{Sorry, I don't know}"
    import_records(engine, tmp_path / "m.jsonl", records)
    reviewer = add_user(engine, "rev", role="reviewer")
    with read_session(engine) as session:
        stored = list(session.execute(select(Transcript.id, Transcript.judge).order_by(Transcript.id)))
    # The reviewer agrees with the default rule on the first 20, and calls the next 4 refusals R, the rest S.
    humans = {tid: judge for tid, judge in stored[:20]} | {tid: "R" for tid, _ in stored[20:24]}
    humans |= {tid: "S" for tid, _ in stored[24:30]}
    with write_session(engine) as session:
        for tid, verdict in humans.items():
            record_review(session, transcript_id=tid, annotator_id=reviewer.id, verdict=verdict)  # type: ignore[arg-type]
    with read_session(engine) as session:
        rows = {row["judge"]: row for row in judge_agreement(session)}
        none = judge_agreement(session, model="nobody")
    assert set(rows) == {"reliablemath", "reliablemath-exact"}
    judged_default = [judge for tid, judge in stored[:30]]
    human = [humans[tid] for tid, _ in stored[:30]]
    default = rows["reliablemath"]
    assert default["reviewed"] == 30
    assert default["kappa"] == cohen_kappa_score(judged_default, human, labels=list(VERDICTS))
    matrix = confusion_matrix(judged_default, human, labels=list(VERDICTS))
    assert [[default["confusion"][j][h] for h in VERDICTS] for j in VERDICTS] == matrix.tolist()
    # The reference rule differs on the capitalised refusal only (the first response, which the reviewer
    # called R like our rule): one more disagreement.
    exact = rows["reliablemath-exact"]
    assert exact["confusion"]["F"]["R"] == default["confusion"]["F"]["R"] + 1
    assert exact["agreement"] == default["agreement"] - 1 / 30
    assert [row["reviewed"] for row in none] == [0, 0] and none[0]["kappa_note"] == "no reviewed responses"


def test_kappa_when_a_judge_says_one_verdict() -> None:
    row = judge_row("always-f", [("F", "F"), ("F", "S")])
    assert row["kappa"] == cohen_kappa_score(["F", "F"], ["F", "S"]) == 0.0 and row["agreement"] == 0.5
    assert row["confusion"]["F"] == {"S": 1, "R": 0, "F": 1}
    both_one = judge_row("always-f", [("F", "F"), ("F", "F")])  # judge and reviewer alike say F only: undefined
    assert both_one["kappa"] is None and both_one["kappa_note"] and both_one["agreement"] == 1.0


def test_each_llm_judge_is_a_row_from_its_stored_verdicts(engine: Engine) -> None:
    from annotator.runs.llm import RoleConfig
    from annotator.transcripts.judge.llm import run_judge
    from annotator.transcripts.judge.llm_options import JudgeOptions
    from tests.support.llm_judge import add_judged_transcripts, scripted_judge
    from tests.support.openai_server import OpenAIServer, Reply

    ids = add_judged_transcripts(engine)
    reviewer = add_user(engine, "rev", role="reviewer")
    human = ["S", "R", "F", "S", "S", "F", "F", "R"]  # the reviewer on the first seven, not the last
    with write_session(engine) as session:
        for tid, verdict in zip(ids[:7], human):
            record_review(session, transcript_id=tid, annotator_id=reviewer.id, verdict=verdict)  # type: ignore[arg-type]
    with OpenAIServer(answer=scripted_judge) as server:
        for name in ("judge-a", "judge-b"):
            if name == "judge-b":  # judge-b gives the seventh no verdict
                server.inject("Hmm, I don't know.", Reply(content="no idea"))
            run_judge(engine, options=JudgeOptions(
                model=RoleConfig(model=name, base_url=server.url, api_key_env="UNSET_TEST_KEY"), concurrency=2))
    with read_session(engine) as session:
        stored = {(row.model, row.transcript_id): row.verdict for row in session.execute(select(Judgement)).scalars()}
        rows = {row["judge"]: row for row in judge_agreement(session)}
        of_model = [row["judge"] for row in judge_agreement(session, model="model-a")]
        of_nobody = [row["judge"] for row in judge_agreement(session, model="nobody")]
    assert list(rows) == ["reliablemath", "reliablemath-exact", "llm judge-a @ v2", "llm judge-b @ v2"]
    assert of_model == list(rows) and of_nobody == ["reliablemath", "reliablemath-exact"]
    for name, reviewed in (("judge-a", ids[:7]), ("judge-b", ids[:6])):
        judged = [stored[(name, tid)] for tid in reviewed]
        humans = human[: len(reviewed)]
        row = rows[f"llm {name} @ v2"]
        assert row["reviewed"] == len(reviewed)
        assert row["kappa"] == pytest.approx(cohen_kappa_score(judged, humans, labels=list(VERDICTS)))
        matrix = confusion_matrix(judged, humans, labels=list(VERDICTS))
        assert [[row["confusion"][j][h] for h in VERDICTS] for j in VERDICTS] == matrix.tolist()
        assert row["agreement"] == sum(j == h for j, h in zip(judged, humans)) / len(reviewed)
    # The rule set, on the same seven reviewed responses, applied afresh.
    assert rows["reliablemath"]["reviewed"] == 7


def test_an_llm_judge_with_no_reviewed_response_has_an_empty_row(engine: Engine) -> None:
    from tests.support.llm_judge import add_judged_transcripts

    [tid] = add_judged_transcripts(engine, [{"response": "\\boxed{9}"}])
    with write_session(engine) as session:
        session.add(Judgement(transcript_id=tid, rule="llm", model="j", prompt_version="v1", verdict="F", reason="r"))
    with read_session(engine) as session:
        [*_, row] = judge_agreement(session)
    assert (row["judge"], row["reviewed"], row["agreement"], row["kappa"]) == ("llm j @ v1", 0, None, None)
    assert row["kappa_note"] == "no reviewed responses"
