"""The `hf` export: a folder Hugging Face `datasets.load_dataset` loads (offline, in a fresh interpreter), whose
rows are the `reliablemath` export's, with typed columns and a dataset card whose YAML front matter `datasets` and
PyYAML read; text from the data is escaped in the card's YAML and Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, select

from annotator.database.engine import read_session, write_session
from annotator.database.models import Candidate
from annotator.figures.agreement import label_agreement
from annotator.import_export.exports import export
from annotator.import_export.exports.hf.card import markdown_text, yaml_string
from annotator.labelling import labels, queue
from annotator.labelling.labels import label_rows
from tests.support.candidates import add_candidates, add_user
from tests.support.cli import run_cli
from tests.support.hf_dataset import front_matter, load_with_datasets, write_release
from tests.support.imports import modules_loaded_by
from tests.support.release import import_release

SOURCES = ("aime", "amc", "minerva")


def _release_rows(folder: Path, kind: str, source: str) -> list[dict]:
    return json.loads((folder / kind / f"{source}.json").read_text(encoding="utf-8"))


def _configs(card: str) -> dict[str, str]:
    """{config name: its one file} from the card's front matter."""
    return {config["config_name"]: config["data_files"][0]["path"] for config in front_matter(card)["configs"]}


def test_datasets_loads_the_folder_with_the_release_exports_rows_and_typed_columns(
        engine: Engine, tmp_path: Path) -> None:
    import_release(engine, write_release(tmp_path / "release"))
    export("reliablemath", tmp_path / "release_out", engine=engine)
    manifest = export("hf", tmp_path / "hf", engine=engine)
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    configs = _configs(card)
    assert list(configs) == [*(f"unsol_{s}" for s in SOURCES), *(f"solve_{s}" for s in SOURCES)]
    assert set(manifest["files"]) == {*configs.values(), "README.md"}
    assert manifest["vetted"]["rule"] == "complete-or-adjudicated"

    loaded = load_with_datasets(tmp_path / "hf", list(configs), tmp_path / "hf_cache")
    for source in SOURCES:
        unsol, solve = loaded[f"unsol_{source}"], loaded[f"solve_{source}"]
        assert (unsol["split"], solve["split"]) == ("unsol", "solve")
        assert unsol["rows"] == _release_rows(tmp_path / "release_out", "unsol", source)
        # A field the release gives on some rows only (AIME's solution) is None on the others.
        assert [{k: v for k, v in row.items() if v is not None} for row in solve["rows"]] == _release_rows(
            tmp_path / "release_out", "solve", source)
    assert loaded[""] == {"split": "unsol", "rows": loaded["unsol_aime"]["rows"]}  # the default config
    # Each column keeps its JSON type: difficulty_eval written as 0 and 1.0 is a whole number.
    assert loaded["unsol_aime"]["features"]["difficulty_eval"] == "Value('int64')"
    assert loaded["unsol_amc"]["features"]["ground_truth"] == "Value('int64')"
    assert loaded["solve_amc"]["features"]["ground_truth"] == "Value('float64')"
    assert loaded["solve_minerva"]["features"]["ground_truth"] == "List(Value('string'))"
    assert loaded["solve_aime"]["features"]["id"] == "Value('int64')"


def test_the_card_front_matter_and_sections(engine: Engine, tmp_path: Path) -> None:
    """Front matter with what the Hub asks for; the sections say how the set was built, the human check with the
    team's agreement (imported labels are no rater), "not audited", and a citation for ReliableMath and each source."""
    import_release(engine, write_release(tmp_path / "release"))
    ann, bob = add_user(engine, "ann"), add_user(engine, "bob")
    with write_session(engine) as session:
        queue.set_labels_per_candidate(session, value=2)
        queue.set_imported_labels_count(session, value=False)
        ids = list(session.execute(select(Candidate.id).order_by(Candidate.id)).scalars())
        for candidate_id in ids:
            for who, check in ((ann, 1), (bob, 1 if candidate_id != ids[-1] else 0)):
                labels.record_label(session, candidate_id=candidate_id, annotator_id=who.id, human_check=check,
                                    difficulty_eval=0 if check else None)
    export("hf", tmp_path / "hf", engine=engine)
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    meta = front_matter(card)
    assert meta["license"] == "cc-by-4.0" and meta["pretty_name"] == "Vetted unsolvable math problems"
    assert meta["task_categories"] == ["question-answering", "text-generation"]
    assert meta["size_categories"] == ["n<1K"]
    assert [config["config_name"] for config in meta["configs"] if config.get("default")] == ["unsol_aime"]
    for path in _configs(card).values():
        assert (tmp_path / "hf" / path).is_file()
    with read_session(engine) as session:
        agreement = label_agreement(label_rows(session))["human_check"]
    assert agreement["items"] == 4 and agreement["percent"] == 0.75
    for heading in ("## How it was built", "## The human check", "## Citation"):
        assert f"\n{heading}\n" in card
    assert ("2 annotator(s) of the team labelled the rewrites (each vetted one has 2 label(s) besides imported ones)"
            in card)
    assert f"- Percent agreement: {agreement['percent']:.3f}" in card
    assert f"- Krippendorff's alpha: {agreement['alpha']:.3f}" in card
    assert "Precision (share of vetted candidates that are truly unsolvable): not audited." in card
    assert "(4 vetted of 4 checked" in card  # the release's own label still votes: 1, 1, 0 resolve to 1
    assert "import\\:reliablemath" in card  # the importer, named as text
    for key in ("xue2025reliablemath", "aimo2024aime", "aimo2024amc", "lewkowycz2022solving"):
        assert f"{{{key}," in card


def test_the_audited_precision_goes_into_the_card_with_its_interval() -> None:
    from annotator.import_export.exports.hf.card import AuditedPrecision, _precision_line

    line = _precision_line(AuditedPrecision(unsolvable=46, sample=50, share=0.92, low=0.8116, high=0.9685))
    assert line == ("Precision (share of vetted candidates that are truly unsolvable): 0.920, 95% Wilson interval "
                    "[0.812, 0.969], from a reviewer's re-check of 50 vetted candidates (46 truly unsolvable).")


def test_the_real_release_loads_and_a_column_of_mixed_types_is_json_text(
        engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    """The release's AIME ground truths are text but one, a number: that column is text, the number written as its
    JSON text, and the card says so; every other row is the release's own."""
    import_release(engine, shared_data / "reliablemath")
    export("hf", tmp_path / "hf", engine=engine)
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    configs = _configs(card)
    loaded = load_with_datasets(tmp_path / "hf", list(configs), tmp_path / "hf_cache")
    for name in configs:
        kind, source = name.split("_", 1)
        expected = json.loads((shared_data / "reliablemath" / kind / f"{source}.json").read_text(encoding="utf-8"))
        mixed = name == "unsol_aime"
        for row in expected:
            if mixed and not isinstance(row["ground_truth"], str):
                row["ground_truth"] = json.dumps(row["ground_truth"])
        assert loaded[name]["rows"] == expected, name
    assert sum(len(loaded[name]["rows"]) for name in configs if name.startswith("unsol_")) == 1102
    assert "`ground_truth` (string, mixed types written as JSON text)" in card
    assert front_matter(card)["size_categories"] == ["1K<n<10K"]


def test_text_from_the_data_is_escaped_in_the_card(engine: Engine, tmp_path: Path) -> None:
    """A data source named with Markdown, HTML and YAML in it: its config name is safe, the YAML still parses, the
    Markdown shows it as text (no link, no tag), and datasets loads its config."""
    hostile = 'x](https://evil.example) <b>bold</b> "q": *_ #'
    add_candidates(engine, 2, data_source=hostile, rewrite_types=("remove",))
    people = [add_user(engine, "ann")]
    with write_session(engine) as session:
        for candidate_id in (1, 2):
            labels.record_label(session, candidate_id=candidate_id, annotator_id=people[0].id, human_check=1,
                                difficulty_eval=1)
    export("hf", tmp_path / "hf", engine=engine)
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    configs = _configs(card)
    assert list(configs) == ["unsol_x_https_evil_example_b_bold_b_q", "solve_x_https_evil_example_b_bold_b_q"]
    body = card.split("\n---\n", 1)[1]
    assert "](https" not in body and "<b>" not in body and markdown_text(hostile) in body
    loaded = load_with_datasets(tmp_path / "hf", list(configs), tmp_path / "hf_cache")
    assert [row["data_source"] for row in loaded[list(configs)[1]]["rows"]] == [hostile, hostile]


@given(st.text())
def test_a_yaml_string_reads_back_as_exactly_the_text(text: str) -> None:
    assert yaml.safe_load(f"key: {yaml_string(text)}") == {"key": text}


@given(st.text())
def test_markdown_text_leaves_no_markup(text: str) -> None:
    shown = markdown_text(text)
    assert "<" not in shown and "\n" not in shown
    assert all(shown[i - 1] == "\\" for i, char in enumerate(shown) if char in "[]()*_`" and i > 0) and (
        not shown or shown[0] not in "[]()*_`")


def test_the_command_writes_the_folder_and_never_loads_datasets(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    assert run_cli(url, "import", str(write_release(tmp_path / "release"))).returncode == 0
    result = run_cli(url, "export", "--format", "hf", "--out", str(tmp_path / "hf"))
    assert result.returncode == 0, result.stderr
    assert f"{tmp_path / 'hf' / 'unsol' / 'aime.parquet'}: 2 records" in result.stdout.splitlines()
    assert (tmp_path / "hf" / "README.md").is_file() and (tmp_path / "hf" / "manifest.json").is_file()
    statement = ("from pathlib import Path; from annotator.database.engine import get_engine; "
                 "from annotator.import_export.exports import export; "
                 f"export('hf', Path({str(tmp_path / 'again')!r}), engine=get_engine({url!r}))")
    assert modules_loaded_by(statement, "datasets", "huggingface_hub", "yaml") == []
    assert (tmp_path / "again" / "README.md").read_bytes() == (tmp_path / "hf" / "README.md").read_bytes()


def test_an_audit_puts_its_share_and_wilson_interval_into_the_card(engine: Engine, tmp_path: Path) -> None:
    """With a reviewer's re-check of a sample, the card gives its share and interval, as statsmodels computes it."""
    from statsmodels.stats.proportion import proportion_confint

    from annotator.labelling import audit

    import_release(engine, write_release(tmp_path / "release"))
    rev = add_user(engine, "rev", role="reviewer")
    with write_session(engine) as session:
        audit.draw(session, size=4, seed=3, drawn_by=rev.id)
        for verdict in (1, 1, 0):
            audit.decide(session, candidate_id=audit.next_to_audit(session), reviewer_id=rev.id, unsolvable=verdict)
    export("hf", tmp_path / "hf", engine=engine)
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    low, high = proportion_confint(2, 3, alpha=0.05, method="wilson")
    assert (f"truly unsolvable): 0.667, 95% Wilson interval [{low:.3f}, {high:.3f}], from a reviewer's re-check of "
            "3 vetted candidates (2 truly unsolvable).") in card
    assert "not audited" not in card
