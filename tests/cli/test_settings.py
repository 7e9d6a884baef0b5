"""`python -m annotator settings`: the project's labels_per_candidate (and gold_every, tested with gold
items), as the queue reads them."""

from __future__ import annotations

from pathlib import Path

from annotator.database.engine import get_engine, read_session, write_session
from annotator.labelling import queue
from tests.support.cli import run_cli


def test_labels_per_candidate_is_shown_set_and_validated(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    assert run_cli(url, "settings").stdout.splitlines() == [
        "labels_per_candidate = 1",
        "imported_labels_count = true (a complete candidate has 1 label(s))",
        "gold_every = 10", "adaptive_overlap = off", "adaptive_threshold = 0.95", "adaptive_max_labels = 3",
        "overlap: fixed: 1 label(s) per candidate (adaptive overlap off)",
    ]
    changed = run_cli(url, "settings", "--labels-per-candidate", "3")
    assert changed.returncode == 0 and changed.stdout.splitlines()[0] == "labels_per_candidate = 3"
    with read_session(get_engine(url)) as session:
        assert queue.labels_per_candidate(session) == 3
    refused = run_cli(url, "settings", "--labels-per-candidate", "0")
    assert refused.returncode == 2 and "from 1 to 20, got 0" in refused.stderr
    assert run_cli(url, "settings").stdout.splitlines()[0] == "labels_per_candidate = 3"


def test_a_bad_stored_value_is_reported_and_the_default_used(tmp_path: Path) -> None:
    from annotator.database import queries

    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    with write_session(get_engine(url)) as session:  # as an older version or a hand edit could leave it
        queries.set_setting(session, key=queue.LABELS_PER_CANDIDATE, value="three")
    shown = run_cli(url, "settings")
    assert shown.returncode == 0 and "Traceback" not in shown.stderr
    assert shown.stdout.splitlines()[0] == (
        "labels_per_candidate = 1 (the stored value 'three' is not a whole number from 1 to 20: this value is used "
        "until it is set again)"
    )
    assert run_cli(url, "settings", "--labels-per-candidate", "2").stdout.splitlines()[0] == "labels_per_candidate = 2"


def test_whether_imported_labels_count_is_shown_beside_k_and_set_both_ways(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    off = run_cli(url, "settings", "--labels-per-candidate", "2", "--no-imported-labels-count")
    assert off.returncode == 0, off.stderr
    assert off.stdout.splitlines()[:2] == [
        "labels_per_candidate = 2", "imported_labels_count = false (a complete candidate has 2 label(s) besides "
        "imported ones)"]
    with read_session(get_engine(url)) as session:
        assert queue.imported_labels_count(session) is False
    # Setting k alone leaves the choice as it is; the flag turns it back on.
    assert run_cli(url, "settings", "--labels-per-candidate", "3").stdout.splitlines()[1].startswith(
        "imported_labels_count = false")
    on = run_cli(url, "settings", "--imported-labels-count")
    assert on.returncode == 0 and on.stdout.splitlines()[1] == (
        "imported_labels_count = true (a complete candidate has 3 label(s))")
    with read_session(get_engine(url)) as session:
        assert queue.imported_labels_count(session) is True


def test_adaptive_overlap_is_set_shown_and_validated(tmp_path: Path) -> None:
    from annotator.labelling import adaptive

    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    changed = run_cli(url, "settings", "--adaptive-overlap", "--adaptive-threshold", "0.97",
                      "--adaptive-max-labels", "4")
    assert changed.returncode == 0, changed.stderr
    assert changed.stdout.splitlines()[3:] == [
        "adaptive_overlap = on", "adaptive_threshold = 0.97", "adaptive_max_labels = 4",
        "overlap: adaptive: another label while the majority's posterior is below 0.97, at most 4 label(s) per "
        "candidate"]
    with read_session(get_engine(url)) as session:
        assert adaptive.overlap(session) == adaptive.Overlap(True, 0.97, 4) and queue.label_target(session).labels == 4
    refused = run_cli(url, "settings", "--adaptive-threshold", "1.5")
    assert refused.returncode == 2 and "--adaptive-threshold" in refused.stderr and "got 1.5" in refused.stderr
    assert "Traceback" not in refused.stderr
    off = run_cli(url, "settings", "--no-adaptive-overlap")
    assert "adaptive_overlap = off" in off.stdout.splitlines() and "adaptive_threshold = 0.97" in off.stdout
    with read_session(get_engine(url)) as session:
        assert queue.label_target(session).labels == 1
