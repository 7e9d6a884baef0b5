"""`python -m annotator import` of transcripts, `report [--json] [--by]`, `judge --rule` and the transcripts export,
end to end in fresh interpreters on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

from annotator.cli.judging import RULE_NAMES
from annotator.db import get_engine
from annotator.transcripts.judge import RULES
from annotator.transcripts.report import KEYS
from tests.support.transcripts import records_for
from tests.test_importer import run_cli


def test_the_rule_names_the_cli_offers_are_the_judges() -> None:
    assert RULE_NAMES == tuple(RULES)


def test_import_report_rejudge_export(tmp_path: Path, shared_data: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    release = shared_data / "reliablemath"
    done = run_cli(url, "import", str(release / "solve" / "aime.json"), str(release / "unsol" / "aime.json"))
    assert done.returncode == 0, done.stderr
    records = records_for(get_engine(url), data_source="aime", model="m", prompt="reliable", a=(21, 0, 9),
                          u=(52, 3, 77))
    records[0]["response"] = "\\boxed{Sorry, I don't know}"  # the rule sets disagree on this one
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    done = run_cli(url, "import", str(path))
    assert done.returncode == 0, done.stderr
    assert "162 transcripts added and judged" in done.stdout

    reported = run_cli(url, "report", "--json")
    assert reported.stderr.startswith("1 verdicts differ between the rule sets")
    [row] = json.loads(reported.stdout)
    assert list(row) == list(KEYS) and (row["A"], row["AS"], row["AR"], row["U"], row["US"]) == (30, 20, 1, 132, 52)
    text = run_cli(url, "report", "--by", "data_source").stdout.splitlines()
    assert text[0].split()[:4] == ["model", "prompt", "data_source", "A"]
    assert [line.split()[2] for line in text[1:3]] == ["all", "aime"]
    assert "20/1/9" in text[1] and "52/3/77" in text[1] and text[-1].startswith("1 verdicts differ")
    bad = run_cli(url, "report", "--by", "model")
    assert bad.returncode == 2 and "cannot break down by model" in bad.stderr

    judged = run_cli(url, "judge", "--rule", "reliablemath-exact")
    assert judged.returncode == 0, judged.stderr
    assert judged.stdout.startswith("judged 162 transcripts with reliablemath-exact v1")
    [row] = json.loads(run_cli(url, "report", "--json").stdout)
    assert (row["AS"], row["AR"], row["AF"]) == (20, 0, 10)

    out = tmp_path / "export"
    assert run_cli(url, "export", "--format", "transcripts", "--out", str(out)).returncode == 0
    lines = (out / "transcripts.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 162 and json.loads(lines[0])["judge_rule"] == "reliablemath-exact"
