"""`python -m annotator audit draw / status / decide`, `stats --json` and `export --format audit`, as a user runs
them, on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from annotator.database.engine import get_engine, write_session
from annotator.labelling import labels
from tests.support.candidates import add_candidates, add_user
from tests.support.cli import run_cli


@pytest.fixture
def url(tmp_path: Path) -> str:
    """12 vetted aime candidates and 4 vetted amc ones; a reviewer, an annotator."""
    url = f"sqlite:///{tmp_path / 'audit.sqlite'}"
    engine = get_engine(url)
    ids = add_candidates(engine, 12, data_source="aime", rewrite_types=("remove",))
    ids += add_candidates(engine, 4, data_source="amc", rewrite_types=("contradict",))
    add_user(engine, "rev", role="reviewer")
    ann = add_user(engine, "ann")
    with write_session(engine) as session:
        labels.record_labels(session, rows=[labels.LabelRow(cid, ann.id, 1, 0) for cid in ids])
    return url


def _status(url: str) -> dict:  # type: ignore[type-arg]
    done = run_cli(url, "audit", "status", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_draw_decide_status_stats_and_export(url: str, tmp_path: Path) -> None:
    assert "not audited (no audit sample drawn)" in run_cli(url, "audit", "status").stdout
    drawn = run_cli(url, "audit", "draw", "--size", "8", "--seed", "5", "--by", "rev")
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.stdout.strip() == "drew 8 vetted candidates with seed 5: aime 6, amc 2"
    status = _status(url)
    assert status["status"] == "not audited" and status["drawn"] == 8 and status["sample"]["drawn_by"] == "rev"

    export = run_cli(url, "export", "--format", "audit", "--as", "csv", "--out", str(tmp_path / "a"))
    assert export.returncode == 0, export.stderr
    order = [line.split(",")[0] for line in (tmp_path / "a" / "audit.csv").read_text().splitlines()[1:]]
    assert len(order) == 8
    for index, data_id in enumerate(order[:5]):
        verdict = "--unsolvable" if index != 2 else "--not-unsolvable"
        done = run_cli(url, "audit", "decide", data_id, verdict, "--by", "rev", "--comment", f"checked {index}")
        assert done.returncode == 0 and done.stdout.strip().startswith(data_id), done.stderr
    status = _status(url)
    low, high = proportion_confint(4, 5, alpha=0.05, method="wilson")
    assert (status["unsolvable"], status["audited"]) == (4, 5)
    assert status["interval"] == [pytest.approx(low), pytest.approx(high)]
    text = run_cli(url, "audit", "status").stdout
    assert "0.800 truly unsolvable" in text and "3 left to audit" in text

    stats = json.loads(run_cli(url, "stats", "--json").stdout)
    assert stats["audit"] == status
    assert "audit: 0.800 truly unsolvable" in run_cli(url, "stats").stdout
    release = run_cli(url, "export", "--out", str(tmp_path / "release"))
    assert "audit: 0.800 truly unsolvable (95% Wilson interval" in release.stdout
    manifest = json.loads((tmp_path / "release" / "manifest.json").read_text())
    assert manifest["audit"]["interval"] == status["interval"]


def test_refusals_are_one_line_and_change_nothing(url: str) -> None:
    def refused(*args: str) -> str:
        done = run_cli(url, *args)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        return lines[0]

    assert "'ann' may not audit (role annotator): only reviewers or admins do" in refused(
        "audit", "draw", "--size", "4", "--seed", "1", "--by", "ann")
    assert "'zed' has no account" in refused("audit", "draw", "--size", "4", "--seed", "1", "--by", "zed")
    assert "draw at least 2" in refused("audit", "draw", "--size", "1", "--seed", "1", "--by", "rev")
    assert "no audit sample is drawn" in refused("audit", "decide", "aime_0_remove_1", "--unsolvable", "--by", "rev")
    assert _status(url)["sample"] is None
    assert run_cli(url, "audit", "draw", "--size", "4", "--seed", "1", "--by", "rev").returncode == 0
    assert "already drawn" in refused("audit", "draw", "--size", "4", "--seed", "2", "--by", "rev")
    assert "say --unsolvable or --not-unsolvable" in refused("audit", "decide", "aime_0_remove_1", "--by", "rev")
    assert "no candidate has data_id 'nope'" in refused("audit", "decide", "nope", "--unsolvable", "--by", "rev")
    assert "--seed" in refused("audit", "draw", "--size", "4", "--seed", "-1", "--by", "rev")
    assert _status(url)["sample"]["seed"] == 1
