"""The rule sets' list (`annotator.transcripts.judge.rule_sets.registry`): a rule set is one module and one entry.

A third rule set, written as a module in the test's folder and added to the list with one entry (in this process,
and in the fresh interpreter each command runs in), is offered by `judge --rule`, judges, is counted against the
reference rule on import and on re-judging, and has its row in `report judges`; on a real SQLite file and a real
throwaway PostgreSQL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, select, update

from annotator.database.engine import read_session, write_session
from annotator.database.models import Transcript
from annotator.import_export.formats import read
from annotator.import_export.importer import import_parts
from annotator.transcripts.judge.rule_sets import registry
from annotator.transcripts.judge.rules import judge_for
from tests.support.imports import PROJECT_ROOT, modules_loaded_by
from tests.support.transcripts import import_records, records_for

# Like the reference rule, but a "don't know" fails: its verdict differs from the reference's on every refusal.
NO_REFUSALS = '''
from annotator.database.vocabulary import JudgeClass
from annotator.transcripts.judge import answers
from annotator.transcripts.judge.rule_sets.rule_set import Correct, RuleSet


def classify(answer: str, correct: Correct) -> JudgeClass:
    if answers.says_unsolvable(answer, exact=False):
        return JudgeClass.unsolvable
    return JudgeClass.correct if correct() else JudgeClass.incorrect


RULE_SET = RuleSet("no-refusals", "2", classify)
'''
ENTRY = registry.Entry("no-refusals", "no_refusals", "a refusal fails")
# `python -m annotator` with the entry added to the list first.
COMMAND = f'''
import runpy
from annotator.transcripts.judge.rule_sets import registry
from annotator.transcripts.judge.rule_sets.registry import Entry
registry.RULE_SETS = (*registry.RULE_SETS, {ENTRY!r})
runpy.run_module("annotator", run_name="__main__")
'''
Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def no_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cli]:
    """The third rule set: its module in the test's folder, its entry at the end of the list; gives a runner of the
    command line with the same list."""
    folder = tmp_path / "rule_sets"
    folder.mkdir()
    (folder / "no_refusals.py").write_text(NO_REFUSALS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(registry, "RULE_SETS", (*registry.RULE_SETS, ENTRY))

    def cli(url: str, *args: str) -> subprocess.CompletedProcess[str]:
        path = os.pathsep.join([str(folder), str(PROJECT_ROOT), os.environ.get("PYTHONPATH", "")])
        env = {**os.environ, "ANNOTATOR_DATABASE_URL": url, "PYTHONPATH": path}
        return subprocess.run([sys.executable, "-c", COMMAND, *args], cwd=PROJECT_ROOT, env=env, capture_output=True,
                              text=True, timeout=120)

    yield cli
    sys.modules.pop("no_refusals", None)


def _stored(engine: Engine) -> list[tuple[int, str, str, str, bool]]:
    with read_session(engine) as session:
        query = select(Transcript.id, Transcript.judge_rule, Transcript.judge_version, Transcript.judge,
                       Transcript.differs_from_reference).order_by(Transcript.id)
        return [(row[0], row[1], row[2], row[3], bool(row[4])) for row in session.execute(query)]


def test_a_third_rule_set_is_one_module_and_one_entry(no_refusals: Cli, database_url: str,
                                                      engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    release = shared_data / "reliablemath"
    import_parts([*read(release / "solve" / "aime.json"), *read(release / "unsol" / "aime.json")], engine=engine)
    records = records_for(engine, data_source="aime", model="m", prompt="reliable", a=(10, 5, 15), u=(40, 12, 80))
    records[0]["response"] = "\\boxed{Sorry, I don't know}"  # a refusal reliablemath-exact fails too
    import_records(engine, tmp_path / "m.jsonl", records)
    imported = _stored(engine)
    refusals = [row[0] for row in imported if row[3] == "R"]
    assert len(refusals) == 1 + 5 + 12
    # Judged on import by the reference rule: the refusals are the ones another rule set judges otherwise.
    assert [row[0] for row in imported if row[4]] == refusals

    assert "no-refusals" in no_refusals(database_url, "judge", "--help").stdout
    bad = no_refusals(database_url, "judge", "--rule", "strict")
    assert bad.returncode == 2
    assert "is not one of 'reliablemath', 'reliablemath-exact', 'no-refusals'" in bad.stderr
    judged = no_refusals(database_url, "judge", "--rule", "no-refusals")
    assert judged.returncode == 0, judged.stderr
    assert judged.stdout.startswith("judged 162 transcripts with no-refusals v2")
    assert "; 18 verdicts differ from the reference rule (reliablemath)" in judged.stdout
    rejudged = _stored(engine)
    assert {row[1:3] for row in rejudged} == {("no-refusals", "2")}
    assert [row[0] for row in rejudged if row[3] != "R" and row[4]] == refusals and "R" not in {r[3] for r in rejudged}
    assert {row[0]: row[3] for row in rejudged if row[0] not in refusals} == {
        row[0]: row[3] for row in imported if row[0] not in refusals}
    reported = no_refusals(database_url, "report")
    assert reported.stdout.splitlines()[-1] == "18 verdicts differ from the reference rule (reliablemath)"

    reviewed = refusals[1:4] + [row[0] for row in imported if row[3] == "S"][:2]
    with write_session(engine) as session:
        session.execute(update(Transcript).where(Transcript.id.in_(reviewed[:3])).values(human="R"))
        session.execute(update(Transcript).where(Transcript.id.in_(reviewed[3:])).values(human="S"))
    table = no_refusals(database_url, "report", "judges", "--json")
    assert table.returncode == 0, table.stderr
    rows = {row["judge"]: row for row in json.loads(table.stdout)}
    assert list(rows) == ["reliablemath", "reliablemath-exact", "no-refusals"]
    assert (rows["reliablemath"]["reviewed"], rows["reliablemath"]["agreement"]) == (5, 1.0)
    third = rows["no-refusals"]
    assert (third["reviewed"], third["agreement"], third["confusion"]["F"]["R"], third["confusion"]["S"]["S"]) == (
        5, 0.4, 3, 2)
    assert "no-refusals" in no_refusals(database_url, "report", "judges").stdout


def test_the_reference_rule_counts_every_other_rule_set_and_another_only_the_reference(
        no_refusals: Cli) -> None:
    """Judged by the reference rule, a response differs when any other rule set's verdict does; judged by another,
    when its own verdict differs from the reference's, whatever a third says."""
    from annotator.transcripts.judge.rules import Question

    question = Question(ground_truth="113", unsolvable=True)
    curly, straight = "\\boxed{sorry, I don\u2019t know}", "\\boxed{sorry, I don't know}"
    reference = judge_for()
    assert [other.name for other in reference.others] == ["reliablemath-exact", "no-refusals"]
    assert reference.response(curly, question)[1] is True  # no-refusals fails it; reliablemath-exact agrees
    assert judge_for("reliablemath-exact").response(curly, question)[1] is False  # R under both
    assert judge_for("reliablemath-exact").response(straight, question)[1] is True
    assert judge_for("no-refusals").response("\\boxed{113}", question)[1] is False


def test_an_entry_names_the_rule_set_its_module_declares(no_refusals: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    misnamed = registry.Entry("refusals-fail", "no_refusals", "a refusal fails")
    monkeypatch.setattr(registry, "RULE_SETS", (*registry.RULE_SETS, misnamed))
    with pytest.raises(ValueError, match="no_refusals declares 'no-refusals', its entry in RULE_SETS names "
                                         "'refusals-fail'"):
        judge_for("refusals-fail")


def test_the_list_starts_with_the_reference_rule_and_its_modules_load_only_when_judging() -> None:
    assert registry.names() == ("reliablemath", "reliablemath-exact")
    assert registry.REFERENCE_RULE == registry.names()[0]
    assert [registry.load(name).name for name in registry.names()] == list(registry.names())
    judge_modules = ("annotator.transcripts.judge.rule_sets.reliablemath", "annotator.transcripts.judge.rules",
                     "math_verify")
    assert modules_loaded_by("import annotator.cli", *judge_modules) == []
