"""`python -m annotator import` of transcripts, `report [--json] [--by]`, `report compare`, `report disagreed`,
`judge [rules] --rule` and the transcripts export, end to end in fresh interpreters on a real SQLite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from pathlib import Path

from annotator.cli.judging import DISAGREED, JUDGE_PROMPT_VERSION, RULE_NAMES, Rule
from annotator.database.engine import get_engine, read_session
from annotator.transcripts import evaluation_items
from annotator.transcripts.judge.llm_prompt import DEFAULT_VERSION
from annotator.transcripts.judge.rule_sets import registry as rule_sets
from annotator.transcripts.report import disagreed
from annotator.transcripts.report.scores import KEYS
from tests.support.cli import run_cli
from tests.support.transcripts import records_for


def test_the_rule_names_the_cli_offers_are_the_lists() -> None:
    assert RULE_NAMES == tuple(rule_sets.names()) == typing.get_args(typing.get_args(Rule)[0])  # what `--rule` takes
    assert JUDGE_PROMPT_VERSION == DEFAULT_VERSION
    assert DISAGREED == disagreed.DISAGREED


def test_import_report_rejudge_export(tmp_path: Path, shared_data: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    release = shared_data / "reliablemath"
    done = run_cli(url, "import", str(release / "solve" / "aime.json"), str(release / "unsol" / "aime.json"))
    assert done.returncode == 0, done.stderr
    records = records_for(get_engine(url), data_source="aime", model="m", prompt="reliable", a=(21, 0, 9),
                          u=(52, 3, 77))
    records[0]["response"] = "\\boxed{Sorry, I don't know}"  # reliablemath-exact's verdict differs from the reference's
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    done = run_cli(url, "import", str(path))
    assert done.returncode == 0, done.stderr
    assert "162 transcripts added and judged" in done.stdout

    reported = run_cli(url, "report", "--json")
    assert reported.stderr.startswith("1 verdicts differ from the reference rule (reliablemath)")
    [row] = json.loads(reported.stdout)
    assert list(row) == list(KEYS) and (row["A"], row["AS"], row["AR"], row["U"], row["US"]) == (30, 20, 1, 132, 52)
    text = run_cli(url, "report", "--by", "data_source").stdout.splitlines()
    assert text[0].split()[:4] == ["model", "prompt", "data_source", "A"]
    assert [line.split()[2] for line in text[1:3]] == ["all", "aime"]
    assert "20/1/9" in text[1] and "52/3/77" in text[1] and text[-1].startswith("1 verdicts differ")
    bad = run_cli(url, "report", "--by", "model")
    assert bad.returncode == 2 and "cannot break down by model" in bad.stderr

    judged = run_cli(url, "judge", "rules", "--rule", "reliablemath-exact")
    assert judged.returncode == 0, judged.stderr
    assert judged.stdout.startswith("judged 162 transcripts with reliablemath-exact v1")
    assert "; 1 verdicts differ from the reference rule (reliablemath)" in judged.stdout
    [row] = json.loads(run_cli(url, "report", "--json").stdout)
    assert (row["AS"], row["AR"], row["AF"]) == (20, 0, 10)

    out = tmp_path / "export"
    assert run_cli(url, "export", "--format", "transcripts", "--out", str(out)).returncode == 0
    lines = (out / "transcripts.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 162 and json.loads(lines[0])["judge_rule"] == "reliablemath-exact"


def test_report_intervals_and_compare_table_6(tmp_path: Path, shared_data: Path) -> None:
    """`report --json` rows carry the six intervals as [low, high]; `report compare` on ReliableMath Table 6's
    two models gives their paired differences and McNemar's tests, as text and as JSON; bad use is one line."""
    from tests.support.judged_answers import TABLE_6

    url = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    release = shared_data / "reliablemath"
    done = run_cli(url, "import", str(release / "solve" / "aime.json"), str(release / "unsol" / "aime.json"))
    assert done.returncode == 0, done.stderr
    records = []
    for model, (a, u, _) in TABLE_6.items():
        records += records_for(get_engine(url), data_source="aime", model=model, prompt="reliable", a=a, u=u)
    path = tmp_path / "table6.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    assert run_cli(url, "import", str(path)).returncode == 0

    rows = json.loads(run_cli(url, "report", "--json", "--bootstrap", "500").stdout)
    for row in rows:
        for name in ("prec_a", "prud_a", "prec_u", "prud_u", "prec", "prud"):
            low, high = row[name + "_ci"]
            assert isinstance(low, float) and low <= row[name] <= high
        assert row["ci_note"] is None and row["ci_method"] == "mover-wilson"  # one response per item
    # MOVER needs no resamples: the bootstrap's switch leaves one response per item alone.
    assert json.loads(run_cli(url, "report", "--json", "--bootstrap", "0").stdout) == rows
    text = run_cli(url, "report").stdout
    assert "Prec 95% CI" in text and "about ±0.16 wide" in text and "MOVER over the Wilson intervals" in text

    done = run_cli(url, "report", "compare", "DeepSeek-R1", "GPT-4o", "--json")
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)
    assert (result["model_a"], result["model_b"], result["prompt"]) == ("DeepSeek-R1", "GPT-4o", "reliable")
    assert (result["items_a"], result["items_u"]) == (30, 132)
    assert set(result["mcnemar"]) == {"prec_a", "prud_a", "prec_u", "prud_u"}
    assert result["mcnemar"]["prec_a"] == {"b": 18, "c": 0, "p": 2 / 2**18}  # R1's 21 S against GPT-4o's 3
    assert result["prec_diff_ci"][0] > 0 and result["diff_ci_method"] == "newcombe-mover"
    text = run_cli(url, "report", "compare", "DeepSeek-R1", "GPT-4o", "--prompt", "reliable").stdout
    assert text.startswith("DeepSeek-R1 against GPT-4o, prompt reliable: 30 solvable and 132 unsolvable items")
    assert "McNemar exact: b=18 c=0 p=7.629e-06" in text
    assert "(Newcombe's paired interval per set, MOVER over A and U, 95%)" in text

    for args, code, message in [
        (("compare", "DeepSeek-R1", "nobody"), 1, "no judged transcripts of model 'nobody'"),
        (("compare", "DeepSeek-R1", "GPT-4o", "--prompt", "standard"), 1, "with prompt 'standard'"),
        (("compare", "DeepSeek-R1", "GPT-4o", "--model", "x"), 2, "No such option: --model"),
        (("compare", "DeepSeek-R1", "GPT-4o", "--by", "rewrite_type"), 2, "No such option: --by"),
        (("compare", "DeepSeek-R1"), 2, "Missing argument 'MODEL_B'"),
        (("--model", "x", "compare", "DeepSeek-R1", "GPT-4o"), 2, "--model is an option of `python -m annotator "
         "report` alone; the options of `python -m annotator report compare` go after it"),
        (("--prompt", "reliable"), 2, "No such option: --prompt"),
        (("--bootstrap", "100001"), 2, "100,000"),
        (("compare", "DeepSeek-R1", "GPT-4o", "--bootstrap", "100001"), 2, "100,000"),
    ]:
        bad = run_cli(url, "report", *args)
        assert bad.returncode == code and message in bad.stderr and "Traceback" not in bad.stderr, (args, bad.stderr)


def test_report_by_rewrite_type_and_the_most_disagreed_items(tmp_path: Path) -> None:
    """`report --by rewrite_type` with its intervals, and `report disagreed N` as text and JSON, on the
    hand-built transcripts of tests/transcripts/report/test_disagreed.py (figures worked out there)."""
    from tests.support.judged_answers import TABLE, add_answers

    url = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    data_ids = add_answers(get_engine(url), TABLE, solvable=frozenset({6}))

    rows = json.loads(run_cli(url, "report", "--json", "--by", "rewrite_type", "--model", "a").stdout)
    assert [row["rewrite_type"] for row in rows] == ["all", "contradict", "remove"]
    remove = rows[2]  # a on remove items 0, 2, 4: S, S, R; on the solvable item 6: S
    assert (remove["US"], remove["UR"], remove["U"], remove["AS"], remove["A"]) == (2, 1, 3, 1, 1)
    assert remove["prec_u_ci"][0] < 2 / 3 < remove["prec_u_ci"][1] and remove["prec_ci"] is not None

    done = run_cli(url, "report", "disagreed", "3", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [(row["data_id"], row["models"]) for row in listed] == [(data_ids[0], 3), (data_ids[4], 2),
                                                                   (data_ids[2], 3)]
    assert listed[0]["disagreement"] == 1.0 and listed[2]["verdicts"]["c"] == {"S": 0, "R": 0, "F": 1}
    text = run_cli(url, "report", "disagreed", "5").stdout.splitlines()
    assert text[0].split() == ["disagreement", "models", "prompt", "data_id", "type", "verdicts"]
    assert text[1].split()[:5] == ["1.000", "3", "standard", data_ids[0], "remove"]
    assert text[1].endswith("a: S; b: R; c: F") and text[4].split()[:5] == ["0.667", "3", "standard",
                                                                              data_ids[6], "solvable"]
    assert text[5].endswith("a: S 1 · F 1; b: S") and text[-1].startswith("disagreement: the chance that two")

    every = json.loads(run_cli(url, "report", "disagreed", "--json").stdout)  # up to DISAGREED items
    assert every[:3] == listed and len(every) == len({(row["data_id"], row["prompt"]) for row in every}) > 3
    for args, message in [(("disagreed", "0"), "1 to 10,000"), (("disagreed", "3", "--model", "a"),
                                                                "No such option: --model"),
                          (("disagreed", "3", "--by", "rewrite_type"), "No such option: --by"),
                          (("--json", "disagreed", "3"), "--json is an option of `python -m annotator report` alone")]:
        bad = run_cli(url, "report", *args)
        assert bad.returncode == 2 and message in bad.stderr and "Traceback" not in bad.stderr, (args, bad.stderr)


def test_report_reads_through_core_without_the_orm(database_url: str) -> None:
    """`report` reads over `annotator.database.light_tables` on a Core connection: its start-up loads neither SQLModel,
    SQLAlchemy's ORM nor the table classes, and its rows and the verdicts that differ from the reference rule are
    those an ORM session reads, reviews and several samples included, on each backend."""
    from sqlalchemy import update

    from annotator.database.engine import read_session, write_session
    from annotator.database.models import Transcript
    from annotator.transcripts.report.scores import differs_from_reference, report
    from tests.conftest import PROJECT_ROOT
    from tests.support.judged_answers import TABLE, add_answers

    engine = get_engine(database_url)
    add_answers(engine, TABLE, solvable=frozenset({6}))
    with write_session(engine) as session:  # a review (kappa, `reviewed`) and verdicts that differ
        session.execute(update(Transcript).where(Transcript.model == "a")
                        .values(human="R", differs_from_reference=True))
    with read_session(engine) as session:
        expected, disagree = report(session, resamples=300, seed=7), differs_from_reference(session)
    assert disagree > 0 and any(row["reviewed"] for row in expected)

    done = subprocess.run(
        [sys.executable, "-m", "annotator", "report", "--json", "--bootstrap", "300", "--seed", "7"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "ANNOTATOR_DATABASE_URL": database_url, "PYTHONPROFILEIMPORTTIME": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected
    assert f"{disagree} verdicts differ from the reference rule (reliablemath)" in done.stderr
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "annotator.transcripts.report.scores" in imported  # the importtime listing is there to be read
    assert imported.isdisjoint({"sqlmodel", "sqlalchemy.orm", "annotator.database.models",
                                "annotator.database.queries"})


def test_report_of_one_verdict_per_set_has_an_interval(database_url: str) -> None:
    """Right on 3 solvable items and wrong on 5 unsolvable ones: `report` prints Prec 0.500 with an interval
    around it (MOVER, `ci_method` in --json), not [0.50, 0.50]; `report compare` against a model wrong everywhere gives
    the difference 0.5 an interval of width."""
    from tests.support.judged_answers import add_answers

    table = [{"right": "S", "wrong": "F"}] * 3 + [{"right": "F", "wrong": "F"}] * 5
    add_answers(get_engine(database_url), table, solvable=frozenset({0, 1, 2}))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        done = run_cli(database_url, "report", *args)
        assert done.returncode == 0, done.stderr
        return done

    [right, _] = json.loads(cli("--json").stdout)
    assert (right["model"], right["prec"], right["ci_method"]) == ("right", 0.5, "mover-wilson")
    low, high = right["prec_ci"]
    assert 0.2 < low < 0.5 < high < 0.75
    line = next(line for line in cli().stdout.splitlines() if line.startswith("right "))
    assert "0.500  [0.22, 0.72]" in line and "[0.50, 0.50]" not in line
    [compared] = json.loads(cli("compare", "right", "wrong", "--json").stdout)
    low, high = compared["prec_diff_ci"]
    assert compared["difference"]["prec"] == 0.5 and 0 < low < 0.5 < high <= 1


def test_import_and_judge_of_answers_the_judge_cannot_compare(tmp_path: Path, shared_data: Path) -> None:
    """A ground truth's list text written out in LaTeX (a NaN for sympy), an exponent tower, and a difference of two
    towers: the import stores them all, and it and `judge` say how many pairs were left undecided."""
    url = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    release = shared_data / "reliablemath"
    done = run_cli(url, "import", str(release / "solve" / "minerva.json"), str(release / "unsol" / "minerva.json"))
    assert done.returncode == 0, done.stderr
    with read_session(get_engine(url)) as session:
        items = [item for item in evaluation_items(session, data_source="minerva") if item.unsolvable][:2]
    answers = [str(items[0].ground_truth).replace("\\\\", "\\"), "9^{9^{9}}", "10^{10^{10}} - 10^{10^{10}}"]
    records = [{"data_id": item.data_id, "model": f"m{number}", "prompt": "standard",
                "response": f"\\boxed{{{answer}}}"} for item in items for number, answer in enumerate(answers)]
    path = tmp_path / "odd.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    done = run_cli(url, "import", str(path))
    assert done.returncode == 0, done.stderr
    golds = len({str(item.ground_truth) for item in items})
    assert (f"6 transcripts added and judged ({golds} distinct (ground truth, answer) pairs ran out of time or were "
            "too costly to evaluate: judged incorrect)") in done.stdout
    judged = run_cli(url, "judge", "--rule", "reliablemath")
    assert judged.returncode == 0, judged.stderr
    assert f"; {golds} distinct (ground truth, answer) pairs ran out of time" in judged.stdout
