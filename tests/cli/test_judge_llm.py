"""`python -m annotator judge llm` and `report judges` as processes against a real local OpenAI-compatible
server: a run judged and started again, a queued run executed by id, an unreadable reply, bad use in one line."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from annotator.database.engine import get_engine, read_session, write_session
from annotator.database.models import Judgement, Run, Transcript
from annotator.database.vocabulary import RunKind
from annotator.runs.kinds import spec
from annotator.runs.llm import RoleConfig
from annotator.transcripts import record_review
from annotator.transcripts.judge.llm_options import JudgeOptions
from tests.support.candidates import add_user
from tests.support.cli import run_cli
from tests.support.heavy_imports import HEAVY, heavy_imports
from tests.support.llm_judge import SPECS, add_judged_transcripts, scripted_judge
from tests.support.openai_server import OpenAIServer, Reply

SCRIPTED = ["S", "R", "F", "F", "S", "F", "R", "S"]


def _judge(server: OpenAIServer, *extra: str, model: str = "judge-m") -> list[str]:
    return ["judge", "llm", "--model", model, "--base-url", server.url, "--api-key-env", "UNSET_TEST_KEY",
            "--concurrency", "2", "--backoff", "0.01", "--no-progress", *extra]


def test_judge_llm_then_report_judges(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'judge.sqlite'}"
    engine = get_engine(url)
    ids = add_judged_transcripts(engine)
    reviewer = add_user(engine, "rev", role="reviewer")
    with write_session(engine) as session:
        for tid, verdict in zip(ids, ["S", "R", "F", "S", "S", "F", "F", "S"]):
            record_review(session, transcript_id=tid, annotator_id=reviewer.id, verdict=verdict)  # type: ignore[arg-type]

    with OpenAIServer(answer=scripted_judge) as server:
        done = run_cli(url, *_judge(server))
        assert done.returncode == 0, done.stderr
        assert ("\nrun 1: succeeded; 8/8 responses, 8 verdicts stored (F 3, R 2, S 3), 0 already judged, 0 replies "
                "unreadable\nrequests 8 (retries 0), cache hits 0") in done.stdout
        again = run_cli(url, *_judge(server))
        assert again.returncode == 0 and "0/0 responses, 0 verdicts stored (none), 8 already judged" in again.stdout

        # A run queued elsewhere (the app) is executed by its id, with its stored options; one reply is no verdict.
        server.inject(SPECS[0]["response"], Reply(content="Verdict: success"))
        with write_session(engine) as session:
            run_id = spec(RunKind.judge).queue(session, created_by="app", options=JudgeOptions(
                model=RoleConfig(model="judge-2", base_url=server.url, api_key_env="UNSET_TEST_KEY"),
                only_reviewed=True, limit=4, backoff_base=0.01))
        queued = run_cli(url, "judge", "llm", "--run-id", str(run_id), "--no-progress")
        assert queued.returncode == 1, queued.stderr
        assert (f"\nrun {run_id}: partial; 4/4 responses, 3 verdicts stored (F 2, R 1), 0 already judged, "
                "1 replies unreadable") in queued.stdout
        assert queued.stderr == (f"  transcript {ids[0]} (math_0_remove_1): unreadable reply: expected 2 lines "
                                 "(Verdict, Reason), got 1; reply 'Verdict: success'\n")
    with read_session(engine) as session:
        assert session.execute(select(Transcript.judge_version).where(Transcript.id == ids[1])).scalar_one() == (
            "judge-2@v2")
        assert len(session.execute(select(Judgement)).all()) == 11
        assert [run.status for run in session.execute(select(Run).order_by(Run.id)).scalars()] == [
            "succeeded", "succeeded", "partial"]

    text = run_cli(url, "report", "judges")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split()[:4] == ["judge", "reviewed", "agreement", "kappa"]
    assert [line.split()[0] for line in lines[1:5]] == ["reliablemath", "reliablemath-exact", "llm", "llm"]
    assert lines[3].split()[:5] == ["llm", "judge-2", "@", "v2", "3"]
    # judge-m: 6 of 8 agree (the reviewer called the 4th and the 7th otherwise).
    assert lines[4].split()[:6] == ["llm", "judge-m", "@", "v2", "8", "0.750"]
    assert "S: 3/0/0  R: 0/1/1  F: 1/0/2" in lines[4]
    rows = json.loads(run_cli(url, "report", "judges", "--json").stdout)
    assert [row["judge"] for row in rows] == [
        "reliablemath", "reliablemath-exact", "llm judge-2 @ v2", "llm judge-m @ v2"]
    assert rows[3]["confusion"] == {"S": {"S": 3, "R": 0, "F": 0}, "R": {"S": 0, "R": 1, "F": 1},
                                    "F": {"S": 1, "R": 0, "F": 2}}
    assert rows[3]["agreement"] == 0.75 and rows[3]["reviewed"] == 8
    assert json.loads(run_cli(url, "report", "judges", "--json", "--model", "nobody").stdout)[2:] == []


def test_bad_use_is_one_line_and_creates_no_run(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bad.sqlite'}"
    add_judged_transcripts(get_engine(url), SPECS[:1])
    local = ["--base-url", "http://127.0.0.1:9/v1"]
    for arguments, message in [
        (["judge", "llm", *local], "judge llm needs --model"),
        (["judge", "--rule", "nope"], "Invalid value for '--rule': 'nope' is not one of 'reliablemath', "
         "'reliablemath-exact'"),
        (["judge", "rules", "--rule", "llm"], "'llm' is not one of 'reliablemath', 'reliablemath-exact'"),
        (["judge", "--model", "m"], "No such option: --model"),
        (["judge", "rules", "--only-reviewed"], "No such option: --only-reviewed"),
        (["judge", "llm", "--model", "m", "--workers", "2", *local], "No such option: --workers"),
        (["judge", "--workers", "2", "llm", "--model", "m", *local], "--workers is an option of `python -m "
         "annotator judge` alone; the options of `python -m annotator judge llm` go after it"),
        (["judge", "llm", "--model", "m", "--prompt-version", "v9", *local],
         "no judge prompt version 'v9'; have v1, v2"),
        (["judge", "llm", "--model", "m", "--api-key-env", "UNSET_TEST_KEY"], "UNSET_TEST_KEY is not set"),
        (["judge", "llm", "--model", "m", "--concurrency", "0", *local], "--concurrency"),
        (["judge", "llm", "--model", "m", "--limit", "-1", *local], "--limit"),
        (["judge", "llm", "--run-id", "5", "--no-progress"], "no judge run 5"),
        (["judge", "--run-id", "5"], "No such option: --run-id"),
        (["report", "judges", "--by", "data_source"], "No such option: --by"),
    ]:
        refused = run_cli(url, *arguments)
        lines = refused.stderr.splitlines()
        assert refused.returncode == 2 and message in refused.stderr, (arguments, refused.stderr)
        assert "Traceback" not in refused.stderr and (len(lines) == 1 or "Usage:" in refused.stderr), refused.stderr
    with read_session(get_engine(url)) as session:
        assert session.execute(select(Run)).first() is None


# The rule sets' list (and the packages holding it, which load nothing on their own): `--rule`'s choices.
RULE_SETS_LIST = ("annotator.transcripts", "annotator.transcripts.judge", "annotator.transcripts.judge.rule_sets",
                  "annotator.transcripts.judge.rule_sets.registry", "annotator.transcripts.judge.rule_sets.rule_set")


def test_the_command_module_imports_nothing_heavy() -> None:
    assert [name for name in heavy_imports("annotator.cli.judging", HEAVY) if name not in RULE_SETS_LIST] == []
