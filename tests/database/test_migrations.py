"""Migrations that change what existing rows mean (0005: the resolved label's provenance); migration files are
named after what they do, and a database at a revision whose file was renamed still upgrades."""

from __future__ import annotations

from datetime import datetime

from alembic import command
from sqlalchemy import Engine, text
from sqlalchemy import inspect as sa_inspect

from annotator.database.engine import MIGRATIONS_DIR, _alembic_config

NOW = datetime(2026, 1, 1, 12, 0)


def _insert(conn, table: str, **row) -> None:  # noqa: ANN001
    conn.execute(text(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join(':' + k for k in row)})"), row)


def test_0005_gives_existing_resolved_labels_their_provenance(engine: Engine) -> None:
    """single = one label; unanimous = several, all the same; majority = the stored label won; a tie is
    unresolved and has none; the downgrade drops the column and the new tables."""
    config = _alembic_config(engine)
    command.downgrade(config, "0004_runs")
    # candidate -> (labels as (human_check, difficulty_eval), resolved label)
    cases = {
        "single": ([(1, 0)], (1, 0)),
        "unanimous": ([(1, 1), (1, 1), (1, 1)], (1, 1)),
        "majority": ([(1, 0), (1, 1), (0, None)], (1, 1)),
        "majority_reject": ([(0, None), (0, None), (1, 0)], (0, None)),
        "tie": ([(1, 0), (0, None)], (None, None)),
        "unlabelled": ([], (None, None)),
    }
    with engine.begin() as conn:
        for i in range(1, 4):
            _insert(conn, "annotator", id=i, name=f"a{i}", role="annotator", is_system=False, is_active=True,
                    created_at=NOW)
        _insert(conn, "problem", id=1, data_source="aime", position=0, question="q", created_at=NOW)
        for cid, (name, (labels, (check, difficulty))) in enumerate(cases.items(), start=1):
            _insert(conn, "candidate", id=cid, problem_id=1, data_id=f"aime_0_remove_{cid}", data_source="aime",
                    rewrite_type="remove", rewritten_question=name, status="pending", label_count=len(labels),
                    human_check=check, difficulty_eval=difficulty, created_at=NOW, updated_at=NOW)
            for annotator_id, (label_check, label_difficulty) in enumerate(labels, start=1):
                _insert(conn, "annotation", candidate_id=cid, annotator_id=annotator_id, human_check=label_check,
                        difficulty_eval=label_difficulty, created_at=NOW, updated_at=NOW)
    command.upgrade(config, "heads")
    with engine.connect() as conn:
        sources = dict(conn.execute(text("SELECT rewritten_question, label_source FROM candidate")).all())
    assert sources == {"single": "single", "unanimous": "unanimous", "majority": "majority",
                       "majority_reject": "majority", "tie": None, "unlabelled": None}

    command.downgrade(config, "0004_runs")
    with engine.connect() as conn:
        columns = list(conn.execute(text("SELECT * FROM candidate LIMIT 0")).keys())
    assert "label_source" not in columns and "rewritten_question" in columns
    command.upgrade(config, "heads")


def test_migration_files_say_what_they_do_and_a_renamed_ones_database_upgrades(engine: Engine) -> None:
    """0007's file was named after a ticket; renamed, it keeps its revision id, so a database at it upgrades."""
    names = sorted(path.stem for path in (MIGRATIONS_DIR / "versions").glob("*.py"))
    assert names and not [name for name in names if "issue" in name or "ticket" in name]
    config = _alembic_config(engine)
    command.downgrade(config, "0007_issue_11b")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0007_issue_11b"
        assert "batch" in conn.execute(text("SELECT * FROM candidateclaim LIMIT 0")).keys()
    command.upgrade(config, "heads")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() != "0007_issue_11b"


def test_0012_adds_judgements_one_per_transcript_and_judge(engine: Engine) -> None:
    """The judgement table comes with its unique key (transcript, rule, model, prompt version); the downgrade drops
    it and leaves the transcripts."""
    from sqlalchemy.exc import IntegrityError

    config = _alembic_config(engine)
    command.downgrade(config, "0011_workers")
    with engine.begin() as conn:
        _insert(conn, "problem", id=1, data_source="aime", position=0, question="q", created_at=NOW)
        _insert(conn, "transcript", id=1, data_id="aime_0", problem_id=1, model="m", prompt="standard", sample=0,
                response="\\boxed{1}", source="test", judge="S", created_at=NOW)
    command.upgrade(config, "heads")
    row = dict(transcript_id=1, rule="llm", model="judge-m", prompt_version="v1", verdict="F", reason="wrong",
               created_at=NOW)
    with engine.begin() as conn:
        _insert(conn, "judgement", **row)
        _insert(conn, "judgement", **{**row, "model": "judge-2"})
    try:
        with engine.begin() as conn:
            _insert(conn, "judgement", **{**row, "verdict": "S"})
        raise AssertionError("a second verdict of the same judge on the same transcript was stored")
    except IntegrityError:
        pass
    with engine.connect() as conn:
        assert conn.execute(text("SELECT model, verdict, reason FROM judgement ORDER BY id")).all() == [
            ("judge-m", "F", "wrong"), ("judge-2", "F", "wrong")]

    command.downgrade(config, "0011_workers")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT judge FROM transcript")).scalar_one() == "S"
        tables = conn.dialect.get_table_names(conn)
    assert "judgement" not in tables
    command.upgrade(config, "heads")


def test_0014_backfills_each_candidates_agreement_and_the_open_disputes(engine: Engine) -> None:
    """Existing labels give each candidate its agreement (the share equal to the most common label; none without
    labels), and the disputes come lowest first from it, adjudicated ones left out; the downgrade drops it."""
    from annotator.database.engine import read_session
    from annotator.labelling import adjudication

    config = _alembic_config(engine)
    command.downgrade(config, "0012_judgements")
    # candidate -> (labels, resolved human_check, label_source, adjudicated)
    cases = {
        "unanimous": ([(1, 0), (1, 0), (1, 0)], 1, "unanimous", False),
        "tie": ([(1, 0), (0, None)], None, None, False),
        "two_of_three": ([(1, 1), (1, 0), (1, 1)], 1, "majority", False),
        "three_ways": ([(1, 1), (0, None), (1, 0)], 1, "majority", False),
        "decided": ([(0, None), (1, 0)], 0, "adjudicated", True),
        "unlabelled": ([], None, None, False),
    }
    with engine.begin() as conn:
        for i in range(1, 5):
            _insert(conn, "annotator", id=i, name=f"a{i}", role="annotator", is_system=False, is_active=True,
                    created_at=NOW)
        _insert(conn, "problem", id=1, data_source="aime", position=0, question="q", created_at=NOW)
        for cid, (name, (labels, check, source, decided)) in enumerate(cases.items(), start=1):
            _insert(conn, "candidate", id=cid, problem_id=1, data_id=f"aime_0_remove_{cid}", data_source="aime",
                    rewrite_type="remove", rewritten_question=name, status="pending", label_count=len(labels),
                    human_check=check, label_source=source, created_at=NOW, updated_at=NOW)
            for annotator_id, (label_check, label_difficulty) in enumerate(labels, start=1):
                _insert(conn, "annotation", candidate_id=cid, annotator_id=annotator_id, human_check=label_check,
                        difficulty_eval=label_difficulty, created_at=NOW, updated_at=NOW)
            if decided:
                _insert(conn, "adjudication", candidate_id=cid, annotator_id=4, human_check=0, created_at=NOW,
                        updated_at=NOW)
    command.upgrade(config, "heads")
    with engine.connect() as conn:
        agreement = dict(conn.execute(text("SELECT rewritten_question, agreement FROM candidate")).all())
    assert agreement == {"unanimous": 1.0, "tie": 0.5, "two_of_three": 2 / 3, "three_ways": 1 / 3, "decided": 0.5,
                         "unlabelled": None}
    with read_session(engine) as session:
        assert [row["id"] for row in adjudication.disputes(session)] == [4, 2, 3]
        assert [row["id"] for row in adjudication.disputes(session, include_adjudicated=True)] == [4, 2, 5, 3]

    command.downgrade(config, "0012_judgements")
    with engine.connect() as conn:
        assert "agreement" not in conn.execute(text("SELECT * FROM candidate LIMIT 0")).keys()
    command.upgrade(config, "heads")


def test_0018_renames_rules_disagree_to_differs_from_reference_with_its_values(engine: Engine) -> None:
    """Transcripts stored with `rules_disagree` keep each value (True, False, None) under `differs_from_reference`,
    the review queue's index is built over the new name and still puts those first; the downgrade gives the old
    column its values back."""
    from annotator.database.engine import read_session
    from annotator.transcripts import ReviewQueue
    from annotator.transcripts.report.scores import differs_from_reference

    config = _alembic_config(engine)
    command.downgrade(config, "0017_run_parts")
    # id -> (rules_disagree, judge_class, human)
    stored = {1: (False, "incorrect", None), 2: (True, "unsolvable", None), 3: (None, None, None),
              4: (True, "incorrect", "F"), 5: (False, "unmatched", None), 6: (True, "correct", None)}
    with engine.begin() as conn:
        _insert(conn, "problem", id=1, data_source="aime", position=0, question="q", created_at=NOW)
        for transcript_id, (disagree, judge_class, human) in stored.items():
            _insert(conn, "transcript", id=transcript_id, data_id="aime_0", problem_id=1, model="m", prompt="standard",
                    sample=transcript_id, response="\\boxed{1}", source="test", judge_class=judge_class,
                    judge=None if judge_class is None else "F", rules_disagree=disagree, human=human, created_at=NOW)
    command.upgrade(config, "heads")
    with engine.connect() as conn:
        values = dict(conn.execute(text("SELECT id, differs_from_reference FROM transcript")).all())
        columns = list(conn.execute(text("SELECT * FROM transcript LIMIT 0")).keys())
        index = conn.execute(text(
            "SELECT sql FROM sqlite_master WHERE name = 'ix_transcript_review'" if engine.dialect.name == "sqlite"
            else "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_transcript_review'")).scalar_one()
    assert {key: None if value is None else bool(value) for key, value in values.items()} == {
        key: disagree for key, (disagree, _, _) in stored.items()}
    assert "rules_disagree" not in columns and "differs_from_reference" in index and "rules_disagree" not in index
    with read_session(engine) as session:
        assert differs_from_reference(session) == 3
        # Unreviewed first: the two that differ (by id), then the judge unsure of two; the reviewed one last.
        assert ReviewQueue.open(session).ids[:4] == [2, 6, 3, 5] and ReviewQueue.open(session).ids[-1] == 4

    command.downgrade(config, "0017_run_parts")
    with engine.connect() as conn:
        values = dict(conn.execute(text("SELECT id, rules_disagree FROM transcript")).all())
    assert {key: None if value is None else bool(value) for key, value in values.items()} == {
        key: disagree for key, (disagree, _, _) in stored.items()}
    command.upgrade(config, "heads")


def test_0022_adds_sent_decisions_and_the_events_decision_ids_and_takes_them_away(engine: Engine) -> None:
    """Upgraded, the events name their decision and `sentdecision` exists; downgraded, both are gone and the events
    are still append-only (their triggers were not lost with a copy of the table)."""
    config = _alembic_config(engine)

    def columns(table: str) -> list[str]:
        with engine.connect() as conn:
            return list(conn.execute(text(f"SELECT * FROM {table} LIMIT 0")).keys())

    assert "decision_id" in columns("annotationevent") and "decision_id" in columns("transcriptevent")
    assert columns("sentdecision") == ["id", "annotator_id", "page", "item_id", "pressed_at", "received_at", "outcome"]
    command.downgrade(config, "0018_reference_rule")
    assert "decision_id" not in columns("annotationevent") and "decision_id" not in columns("transcriptevent")
    with engine.begin() as conn:
        _insert(conn, "annotator", id=1, name="ann", role="annotator", is_system=False, is_active=True,
                created_at=NOW)
        _insert(conn, "problem", id=1, data_source="aime", position=0, question="q", created_at=NOW)
        _insert(conn, "candidate", id=1, problem_id=1, data_id="c", data_source="aime", rewrite_type="remove",
                rewritten_question="q?", status="pending", label_count=0, created_at=NOW, updated_at=NOW)
        _insert(conn, "annotationevent", id=1, candidate_id=1, annotator_id=1, action="create", at=NOW)
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE annotationevent SET action = 'update'"))
        changed = True
    except Exception:  # noqa: BLE001  (the trigger's refusal differs between SQLite and PostgreSQL)
        changed = False
    assert not changed
    command.upgrade(config, "heads")
    assert "decision_id" in columns("annotationevent")
def test_0020_adds_the_audit_tables_and_its_downgrade_drops_them(engine: Engine) -> None:
    """An audit sample and its items are stored after the upgrade; the downgrade drops both tables, labels kept."""
    config = _alembic_config(engine)
    command.downgrade(config, "0018_reference_rule")
    with engine.begin() as conn:
        _insert(conn, "annotator", id=1, name="rev", role="reviewer", is_system=False, is_active=True, created_at=NOW)
        _insert(conn, "problem", id=1, data_source="aime", position=0, question="q", created_at=NOW)
        _insert(conn, "candidate", id=1, problem_id=1, data_id="aime_0_remove_1", data_source="aime",
                rewrite_type="remove", rewritten_question="r", status="pending", label_count=0, created_at=NOW,
                updated_at=NOW)
    command.upgrade(config, "heads")
    with engine.begin() as conn:
        _insert(conn, "auditsample", id=1, seed=7, size=1, vetted=1, drawn_by=1, drawn_at=NOW)
        _insert(conn, "audititem", sample_id=1, candidate_id=1, data_source="aime", position=0, unsolvable=1,
                comment="checked", audited_by=1, audited_at=NOW)
        assert conn.execute(text("SELECT unsolvable, comment FROM audititem")).one() == (1, "checked")
    command.downgrade(config, "0018_reference_rule")
    with engine.connect() as conn:
        tables = set(sa_inspect(conn).get_table_names())
    assert "auditsample" not in tables and "audititem" not in tables and "candidate" in tables
    command.upgrade(config, "heads")


def test_0021_counts_each_candidates_labels_that_came_with_an_import(engine: Engine) -> None:
    """Existing labels of system annotators (an import, a pipeline) give each candidate its `imported_label_count`,
    people's labels none; the Overview's index takes the column; the downgrade drops it and keeps the labels."""
    config = _alembic_config(engine)
    command.downgrade(config, "0018_reference_rule")
    # candidate -> annotators (1, 2: people; 3, 4: system annotators) who labelled it
    cases = {"people": [1, 2], "release": [3], "both": [1, 3, 4], "none": []}
    with engine.begin() as conn:
        for i in range(1, 5):
            _insert(conn, "annotator", id=i, name=f"a{i}" if i < 3 else f"import:file{i}", role="annotator",
                    is_system=i >= 3, is_active=True, created_at=NOW)
        _insert(conn, "problem", id=1, data_source="aime", position=0, question="q", created_at=NOW)
        for cid, (name, who) in enumerate(cases.items(), start=1):
            _insert(conn, "candidate", id=cid, problem_id=1, data_id=f"aime_0_remove_{cid}", data_source="aime",
                    rewrite_type="remove", rewritten_question=name, status="pending", label_count=len(who),
                    created_at=NOW, updated_at=NOW)
            for annotator_id in who:
                _insert(conn, "annotation", candidate_id=cid, annotator_id=annotator_id, human_check=1,
                        difficulty_eval=0, created_at=NOW, updated_at=NOW)
    command.upgrade(config, "heads")
    index = ("SELECT sql FROM sqlite_master WHERE name = 'ix_candidate_state'" if engine.dialect.name == "sqlite"
             else "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_candidate_state'")
    with engine.connect() as conn:
        counted = dict(conn.execute(text("SELECT rewritten_question, imported_label_count FROM candidate")).all())
        assert "imported_label_count" in conn.execute(text(index)).scalar_one()
    assert counted == {"people": 0, "release": 1, "both": 2, "none": 0}

    command.downgrade(config, "0018_reference_rule")
    with engine.connect() as conn:
        assert "imported_label_count" not in conn.execute(text("SELECT * FROM candidate LIMIT 0")).keys()
        assert "imported_label_count" not in conn.execute(text(index)).scalar_one()
        assert conn.execute(text("SELECT COUNT(*) FROM annotation")).scalar_one() == 6
    command.upgrade(config, "heads")


def test_0019_adds_the_settled_flag_false_for_existing_candidates(engine: Engine) -> None:
    """Candidates stored before adaptive overlap are not settled; the downgrade drops the column and keeps them."""
    config = _alembic_config(engine)
    command.downgrade(config, "0018_reference_rule")
    with engine.begin() as conn:
        _insert(conn, "problem", id=1, data_source="aime", position=0, question="q", created_at=NOW)
        for cid in (1, 2):
            _insert(conn, "candidate", id=cid, problem_id=1, data_id=f"aime_0_remove_{cid}", data_source="aime",
                    rewrite_type="remove", rewritten_question="r", status="pending", label_count=cid,
                    created_at=NOW, updated_at=NOW)
    command.upgrade(config, "heads")
    with engine.connect() as conn:
        assert dict(conn.execute(text("SELECT id, settled FROM candidate")).all()) in ({1: False, 2: False},
                                                                                      {1: 0, 2: 0})
    command.downgrade(config, "0018_reference_rule")
    with engine.connect() as conn:
        assert "settled" not in conn.execute(text("SELECT * FROM candidate LIMIT 0")).keys()
        assert conn.execute(text("SELECT count(*) FROM candidate")).scalar() == 2
    command.upgrade(config, "heads")


def test_0025_adds_dispute_claims_and_its_downgrade_drops_them(engine: Engine) -> None:
    """A reviewer's claim on a dispute is stored after the upgrade; the downgrade drops the table, candidates kept."""
    config = _alembic_config(engine)
    command.downgrade(config, "0022_decision_ids")
    with engine.begin() as conn:
        _insert(conn, "annotator", id=1, name="rev", role="reviewer", is_system=False, is_active=True, created_at=NOW)
        _insert(conn, "problem", id=1, data_source="aime", position=0, question="q", created_at=NOW)
        _insert(conn, "candidate", id=1, problem_id=1, data_id="aime_0_remove_1", data_source="aime",
                rewrite_type="remove", rewritten_question="r", status="pending", label_count=0, created_at=NOW,
                updated_at=NOW)
    command.upgrade(config, "heads")
    with engine.begin() as conn:
        _insert(conn, "disputeclaim", candidate_id=1, reviewer_id=1, queue="adjudicate", expires_at=NOW)
        assert conn.execute(text("SELECT reviewer_id, queue FROM disputeclaim")).one() == (1, "adjudicate")
    command.downgrade(config, "0022_decision_ids")
    with engine.connect() as conn:
        tables = set(sa_inspect(conn).get_table_names())
    assert "disputeclaim" not in tables and "candidate" in tables
    command.upgrade(config, "heads")


def test_0026_counts_the_existing_labels_per_annotator_and_day_and_its_downgrade_drops_them(engine: Engine) -> None:
    """The upgrade counts the labels already stored into `labelday` (per annotator and UTC day, seconds missing as
    none) and its triggers count the next ones; the downgrade drops table and triggers, and labels are still
    written."""
    config = _alembic_config(engine)
    command.downgrade(config, "0025_dispute_claims")
    days = [datetime(2026, 1, 1, 23, 59), datetime(2026, 1, 2, 0, 1)]
    with engine.begin() as conn:
        for i in (1, 2):
            _insert(conn, "annotator", id=i, name=f"a{i}", role="annotator", is_system=False, is_active=True,
                    created_at=NOW)
        _insert(conn, "problem", id=1, data_source="aime", position=0, question="q", created_at=NOW)
        for cid in range(1, 5):
            _insert(conn, "candidate", id=cid, problem_id=1, data_id=f"aime_0_remove_{cid}", data_source="aime",
                    rewrite_type="remove", rewritten_question="r", status="pending", label_count=0, created_at=NOW,
                    updated_at=NOW)
        for cid, who, at, seconds in [(1, 1, days[0], 2.5), (2, 1, days[0], None), (3, 1, days[1], 4.0),
                                      (1, 2, days[1], 1.0)]:
            _insert(conn, "annotation", candidate_id=cid, annotator_id=who, human_check=0, seconds_spent=seconds,
                    created_at=at, updated_at=at)
    command.upgrade(config, "heads")

    def counted() -> dict[tuple[int, str], tuple[int, float]]:
        with engine.connect() as conn:
            return {(who, str(day)): (n, seconds) for who, day, n, seconds in conn.execute(text(
                "SELECT annotator_id, day, sum(labels), sum(seconds) FROM labelday GROUP BY annotator_id, day"))}

    assert counted() == {(1, "2026-01-01"): (2, 2.5), (1, "2026-01-02"): (1, 4.0), (2, "2026-01-02"): (1, 1.0)}
    with engine.begin() as conn:
        _insert(conn, "annotation", candidate_id=4, annotator_id=2, human_check=0, seconds_spent=3.0,
                created_at=days[1], updated_at=days[1])
    assert counted()[(2, "2026-01-02")] == (2, 4.0)
    command.downgrade(config, "0025_dispute_claims")
    with engine.begin() as conn:
        assert "labelday" not in set(sa_inspect(conn).get_table_names())
        _insert(conn, "annotation", candidate_id=4, annotator_id=1, human_check=0, created_at=NOW, updated_at=NOW)
        conn.execute(text("UPDATE annotation SET seconds_spent = 1"))
        conn.execute(text("DELETE FROM annotation WHERE candidate_id = 1"))
        assert conn.execute(text("SELECT count(*) FROM annotation")).scalar_one() == 4
    command.upgrade(config, "heads")
    assert counted() == {(1, "2026-01-01"): (2, 2.0), (1, "2026-01-02"): (1, 1.0), (2, "2026-01-02"): (1, 1.0)}


def _plan(conn, sql: str) -> str:  # noqa: ANN001
    """The query plan's text; on PostgreSQL with scans of the whole table ruled out (its few rows would win)."""
    if conn.dialect.name == "sqlite":
        return " ".join(str(row[-1]) for row in conn.execute(text(f"EXPLAIN QUERY PLAN {sql}")))
    conn.execute(text("SET LOCAL enable_seqscan = off"))
    return " ".join(row[0] for row in conn.execute(text(f"EXPLAIN {sql}")))


def test_0027_drops_the_labels_candidate_index_and_lookups_by_candidate_use_the_unique_key(engine: Engine) -> None:
    """After the upgrade a candidate's labels are found through the unique key (candidate_id, annotator_id), its
    labels kept; the downgrade brings the index on candidate_id back."""
    config = _alembic_config(engine)
    command.downgrade(config, "0025_dispute_claims")
    with engine.begin() as conn:
        assert "ix_annotation_candidate_id" in {ix["name"] for ix in sa_inspect(conn).get_indexes("annotation")}
        _insert(conn, "annotator", id=1, name="ann", role="annotator", is_system=False, is_active=True, created_at=NOW)
        _insert(conn, "problem", id=1, data_source="aime", position=0, question="q", created_at=NOW)
        _insert(conn, "candidate", id=1, problem_id=1, data_id="aime_0_remove_1", data_source="aime",
                rewrite_type="remove", rewritten_question="r", status="pending", label_count=1, created_at=NOW,
                updated_at=NOW)
        _insert(conn, "annotation", id=1, candidate_id=1, annotator_id=1, human_check=1, difficulty_eval=0,
                created_at=NOW, updated_at=NOW)
    command.upgrade(config, "heads")
    with engine.begin() as conn:
        assert "ix_annotation_candidate_id" not in {ix["name"] for ix in sa_inspect(conn).get_indexes("annotation")}
        plan = _plan(conn, "SELECT human_check FROM annotation WHERE candidate_id = 1")
        assert conn.execute(text("SELECT human_check FROM annotation WHERE candidate_id = 1")).all() == [(1,)]
    unique_key = "sqlite_autoindex_annotation" if engine.dialect.name == "sqlite" else "candidate_id_annotator_id"
    assert unique_key in plan, plan
    command.downgrade(config, "0025_dispute_claims")
    with engine.connect() as conn:
        assert "ix_annotation_candidate_id" in {ix["name"] for ix in sa_inspect(conn).get_indexes("annotation")}
        assert conn.execute(text("SELECT count(*) FROM annotation")).scalar() == 1
    command.upgrade(config, "heads")


def test_0028_indexes_the_settled_candidates_and_their_count_reads_that_index(engine: Engine) -> None:
    """After the upgrade the pending settled candidates short of their labels are counted from the partial index
    (a queue's progress counts them apart from those with enough labels); the downgrade drops it."""
    config = _alembic_config(engine)
    command.downgrade(config, "0027_label_index")
    with engine.begin() as conn:
        assert "ix_candidate_settled" not in {ix["name"] for ix in sa_inspect(conn).get_indexes("candidate")}
    command.upgrade(config, "heads")
    count = "SELECT count(*) FROM candidate WHERE status = 'pending' AND settled AND NOT label_count >= 4"
    with engine.begin() as conn:
        assert "ix_candidate_settled" in {ix["name"] for ix in sa_inspect(conn).get_indexes("candidate")}
        assert "ix_candidate_settled" in _plan(conn, count)
    command.downgrade(config, "0027_label_index")
    with engine.connect() as conn:
        assert "ix_candidate_settled" not in {ix["name"] for ix in sa_inspect(conn).get_indexes("candidate")}
    command.upgrade(config, "heads")
