"""`python -m annotator agreement` over labels recorded the way the app records them, on a real SQLite file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from annotator.accounts import auth
from annotator.database.engine import get_engine, write_session
from annotator.labelling import labels
from tests.support.candidates import add_candidates, add_user
from tests.support.cli import run_cli

# (human_check, difficulty_eval) per candidate for three annotators; d is an import's pseudo-annotator.
A = [(1, 0), (1, 1), (0, None), (1, 0), (1, 1), (0, None)]
B = [(1, 0), (1, 0), (0, None), (1, 0), (0, None), (0, None)]
C = [(1, 1), (1, 1), (1, 0), (1, 0), (1, 1), (0, None)]


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'team.sqlite'}"
    engine = get_engine(url)
    ids = add_candidates(engine, len(A), data_source="math") + add_candidates(engine, 2, data_source="aime")
    people = {name: add_user(engine, name) for name in ("a", "b", "c")}
    with write_session(engine) as session:
        system = auth.system_annotator_id(session, name="import:sheet.json")
        for name, decisions in (("a", A), ("b", B), ("c", C)):
            for candidate_id, (check, difficulty) in zip(ids, decisions):
                labels.record_label(
                    session, candidate_id=candidate_id, annotator_id=people[name].id, human_check=check,
                    difficulty_eval=difficulty, seconds_spent=10.0 + len(name),
                )
        for candidate_id in ids:
            labels.record_label(session, candidate_id=candidate_id, annotator_id=system, human_check=1,
                                difficulty_eval=0)
    return url


def test_agreement_json_counts_people_not_imports(url: str) -> None:
    result = run_cli(url, "agreement", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report) == {"human_check", "difficulty_eval", "accuracy"}
    assert [person["annotator"] for person in report["accuracy"]["annotators"]] == ["a", "b", "c"]
    checks = report["human_check"]
    assert checks["items"] == 6  # the two aime candidates carry only the import's labels
    assert {row["name"] for row in checks["annotators"]} == {"a", "b", "c"}
    pairs = {(row["a"], row["b"]): row for row in checks["pairwise"]}
    expected = cohen_kappa_score([c for c, _ in A], [c for c, _ in B])
    assert pairs[("a", "b")]["kappa"] == pytest.approx(expected) and pairs[("a", "b")]["items"] == 6
    assert checks["fleiss_raters"] == 3
    assert {row["median_seconds"] for row in checks["annotators"]} == {11.0}
    # difficulty_eval: only candidates with two or more human_check = 1 labels, among those who accepted.
    difficulty = report["difficulty_eval"]
    accepted = [i for i in range(6) if sum(x[i][0] for x in (A, B, C)) >= 2]
    assert difficulty["items"] == len(accepted) == 4


def test_agreement_can_name_an_import_and_filter_by_data_source(url: str) -> None:
    report = json.loads(run_cli(url, "agreement", "--json", "--include", "import:sheet.json").stdout)
    assert report["human_check"]["items"] == 8
    assert "import:sheet.json" in {row["name"] for row in report["human_check"]["annotators"]}
    only_aime = json.loads(run_cli(url, "agreement", "--json", "--data-source", "aime").stdout)
    assert only_aime["human_check"]["items"] == 0
    assert only_aime["human_check"]["percent"] is None
    assert only_aime["human_check"]["undefined"]["alpha"]


def test_agreement_text_names_undefined_values(url: str) -> None:
    everyone = run_cli(url, "agreement")
    assert everyone.returncode == 0, everyone.stderr
    fleiss_line = r"^  fleiss_kappa  -?\d\.\d{3} over the items with 3 labels$"
    assert re.search(fleiss_line, everyone.stdout, re.M), everyone.stdout
    result = run_cli(url, "agreement", "--data-source", "aime")
    assert result.returncode == 0, result.stderr
    assert "human_check: 0 items" in result.stdout
    assert "percent       — (no item has labels from two or more annotators)" in result.stdout


def test_batches_import_and_labels_export_as_a_team_runs_them(tmp_path: Path) -> None:
    """batches -> fill in with openpyxl -> import -> export --format labels --as csv, through the command line."""
    from openpyxl import load_workbook

    url = f"sqlite:///{tmp_path / 'sheets.sqlite'}"
    engine = get_engine(url)
    add_candidates(engine, 6)
    for name in ("ann", "bob"):
        add_user(engine, name)
    assert run_cli(url, "settings", "--labels-per-candidate", "2").returncode == 0
    out = tmp_path / "batches"
    made = run_cli(url, "batches", "--annotators", "ann,bob", "--overlap", "2", "--days", "7", "--out", str(out))
    assert made.returncode == 0, made.stderr
    assert f"ann: 6 candidates -> {out / 'ann.xlsx'}" in made.stdout and "held until" in made.stdout
    for name, check in (("ann", 1), ("bob", 0)):
        workbook = load_workbook(out / f"{name}.xlsx")
        workbook.active["H2"] = check
        workbook.active["I2"] = 1 if check else None
        workbook.save(out / f"{name}.xlsx")
    imported = run_cli(url, "import", str(out / "ann.xlsx"), str(out / "bob.xlsx"))
    assert imported.returncode == 0, imported.stderr
    assert "2 labels added" in imported.stdout and "10 sheet rows not labelled yet (skipped)" in imported.stdout
    exported = run_cli(url, "export", "--format", "labels", "--as", "csv", "--with-history", "--out",
                       str(tmp_path / "l"))
    assert exported.returncode == 0, exported.stderr
    lines = (tmp_path / "l" / "labels.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "data_id,annotator,human_check,difficulty_eval,comment,seconds_spent,created_at,updated_at,gold"
    assert [line.split(",")[:4] for line in lines[1:]] == [["math_0_remove_1", "ann", "1", "1"],
                                                          ["math_0_remove_1", "bob", "0", ""]]
    assert (tmp_path / "l" / "label_history.csv").exists()


def test_batches_and_labels_usage_errors(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sheets.sqlite'}"
    add_candidates(get_engine(url), 1)
    missing = run_cli(url, "batches", "--annotators", "zed", "--per-annotator", "1", "--out", str(tmp_path / "b"))
    assert missing.returncode == 2 and "error: 'zed' has no account" in missing.stderr
    wrong = run_cli(url, "export", "--format", "csv", "--as", "parquet", "--out", str(tmp_path / "x"))
    assert wrong.returncode == 2 and "--as applies to --format labels or audit only" in wrong.stderr


def test_agreement_json_gives_each_annotators_accuracy_with_its_interval(tmp_path: Path) -> None:
    from annotator.database.engine import read_session
    from annotator.labelling.accuracy import fit_from_database
    from tests.support.simulated_team import ACCURACIES, simulate, store

    url = f"sqlite:///{tmp_path / 'sim.sqlite'}"
    _, frame = simulate(ACCURACIES, 150, seed=31)
    store(get_engine(url), frame)
    result = run_cli(url, "agreement", "--json", "--resamples", "40")
    assert result.returncode == 0, result.stderr
    accuracy = json.loads(result.stdout)["accuracy"]
    with read_session(get_engine(url)) as session:
        expected = fit_from_database(session, resamples=40)
    assert accuracy == json.loads(json.dumps(expected.to_json()))
    people = accuracy["annotators"]
    assert [person["annotator"] for person in people] == [f"a{i}" for i in range(5)]
    assert set(people[0]) == {"annotator", "accuracy", "accuracy_low", "accuracy_high", "items", "confusion"}
    assert all(person["items"] == 150 and person["accuracy_low"] < person["accuracy"] < person["accuracy_high"]
               for person in people)
    assert max(abs(person["accuracy"] - truth) for person, truth in zip(people, ACCURACIES)) < 0.08
    assert set(people[0]["confusion"]) == {"true_0", "true_1"} and set(people[0]["confusion"]["true_1"]) == {
        "said_0", "said_1"}
    text = run_cli(url, "agreement", "--resamples", "0").stdout
    assert re.search(r"^  a0: 0\.9\d\d on 150 items$", text, re.M), text
    assert run_cli(url, "agreement", "--resamples", "-1").returncode == 2


def test_agreement_counts_the_llm_verifier_as_a_rater_only_when_asked(tmp_path: Path) -> None:
    from sqlalchemy import update

    from annotator.database.models import Candidate
    from tests.support.simulated_team import simulate, store

    url = f"sqlite:///{tmp_path / 'llm.sqlite'}"
    truth, frame = simulate((0.9, 0.8), 40, seed=3)
    ids, _ = store(get_engine(url), frame)
    with write_session(get_engine(url)) as session:
        for task, candidate_id in enumerate(ids[:30]):  # ten candidates never verified: no verdict
            outputs = {"verification": {"verdict": True}, "unsolvable": {"verdict": bool(truth[task])}}
            session.execute(update(Candidate).where(Candidate.id == candidate_id).values(llm_outputs=outputs))
    plain = json.loads(run_cli(url, "agreement", "--json", "--resamples", "0").stdout)["accuracy"]
    with_llm = json.loads(run_cli(url, "agreement", "--json", "--resamples", "0", "--llm-rater").stdout)["accuracy"]
    assert [row["annotator"] for row in plain["annotators"]] == ["a0", "a1"]
    llm = with_llm["annotators"][-1]
    assert llm["annotator"] == "LLM verifier" and llm["items"] == 30 and llm["accuracy"] > 0.9
    assert with_llm["labels"] == plain["labels"] + 30
