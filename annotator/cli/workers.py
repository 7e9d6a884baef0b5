"""`python -m annotator worker`: claim queued runs from the database and execute them; `python -m annotator runs`:
list runs with their status, worker and heartbeat age.

Everything a run needs is imported when a command runs, not when the command line starts.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from annotator import limits
from annotator.cli._app import app, bounded, fail
from annotator.cli._llm_options import RunId


def _kinds(value: str | None) -> list[str]:
    from annotator.runs.kinds import KINDS

    known = [str(kind) for kind in KINDS]
    if value is None:
        return known
    chosen = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [kind for kind in chosen if kind not in known]
    if unknown or not chosen:
        fail(f"--kinds takes kinds of run from {', '.join(known)}; got {value[:200]!r}", 2)
    return chosen


@app.command()
def worker(
    once: Annotated[bool, typer.Option("--once", help="Take one run, execute it and exit.")] = False,
    kinds: Annotated[
        str | None, typer.Option(help="The kinds of run to take, comma-separated (default: every kind).")
    ] = None,
    run_id: RunId = None,
    poll: Annotated[
        float, typer.Option(help="Seconds between looks for work while idle.", **bounded(limits.POLL))
    ] = 2.0,
) -> None:
    """Claim queued runs (and runs whose worker died) from the database and execute them, until stopped.

    Start as many as you like, on any machine that reaches the database: each run is taken by one worker. A run
    whose worker stops beating for ANNOTATOR_HEARTBEAT_TIMEOUT seconds (default 60) is taken over by another and
    resumes from the call cache, re-sending no answered request. With --run-id, only that run (implies --once).
    """
    from annotator.cli._progress import log_lines
    from annotator.db import get_engine
    from annotator.runs import RunError, stale_after
    from annotator.runs.workers import serve

    chosen = _kinds(kinds)
    stale_after(strict=True)  # a bad ANNOTATOR_HEARTBEAT_TIMEOUT is told now, in one line
    try:
        ended = serve(get_engine(), kinds=chosen, once=once or run_id is not None, run_id=run_id, poll_seconds=poll,
                      say=lambda line: typer.echo(line), progress=log_lines)
    except RunError as exc:
        fail(str(exc), 2)
    if (once or run_id is not None) and ended != ["succeeded"]:
        raise typer.Exit(1)


def _row(run: Any) -> dict[str, Any]:
    from annotator.runs import heartbeat_age, stale_reason

    age = heartbeat_age(run) if run.status in ("queued", "running") else None
    return {
        "run": run.id, "kind": run.kind, "status": run.status, "stale": stale_reason(run),
        "done": run.problems_done, "total": run.problems_total, "worker": run.worker,
        "heartbeat_age_seconds": None if age is None else round(age.total_seconds(), 1),
        "cancel_requested": run.cancel_requested, "created_by": run.created_by,
        "created_at": run.created_at.isoformat(), "finished_at": run.finished_at and run.finished_at.isoformat(),
        "message": run.message,
    }


def _text(rows: list[dict[str, Any]], workers: list[dict[str, Any]]) -> str:
    if not rows:
        lines = ["no runs"]
    else:
        table = [("run", "kind", "status", "done", "worker", "heartbeat", "by")] + [(
            str(row["run"]), row["kind"], row["status"] + (" (stale)" if row["stale"] else "")
            + (" (cancelling)" if row["cancel_requested"] and row["status"] == "running" else ""),
            f"{row['done']}/{row['total']}", row["worker"] or "-",
            "-" if row["heartbeat_age_seconds"] is None else f"{row['heartbeat_age_seconds']:g} s ago",
            row["created_by"] or "-",
        ) for row in rows]
        widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
                 for line in table]
    described = ", ".join(f"{w['worker']} ({w['kinds']})" for w in workers)
    return "\n".join([*lines, f"workers: {described or 'none running'}"])


@app.command("runs")
def list_runs(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON: runs and live workers.")] = False,
    limit: Annotated[int, typer.Option(help="The newest this many runs.", **bounded(limits.RUNS_SHOWN))] = 20,
) -> None:
    """List the newest runs with their status, the worker holding each and how long ago it beat, and the live
    workers (a run is stale once its heartbeat is older than ANNOTATOR_HEARTBEAT_TIMEOUT seconds)."""
    from annotator.db import get_engine, read_session
    from annotator.runs import recent_runs
    from annotator.runs.health import live_workers

    with read_session(get_engine()) as session:
        rows = [_row(run) for run in recent_runs(session, limit=limit)]
        workers = [{"worker": w.id, "kinds": w.kinds} for w in live_workers(session)]
    typer.echo(json.dumps({"runs": rows, "workers": workers}, indent=2) if as_json else _text(rows, workers))
