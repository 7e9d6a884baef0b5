"""`python -m annotator worker`: claim queued runs from the database and execute them; `python -m annotator runs`:
list runs with their status, worker and heartbeat age.

Everything a run needs is imported when a command runs, not when the command line starts.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from annotator.cli._app import app, bounded, fail
from annotator.cli._llm_options import RunId
from annotator.settings import limits


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
    whose worker stops beating for ANNOTATOR_HEARTBEAT_TIMEOUT seconds (default 60), or whose process on this
    machine has ended, is taken over by another and resumes from the call cache, re-sending no answered request.
    With --run-id, only that run (implies --once; a job split into parts: each of its parts no live worker
    holds). On SIGTERM a worker finishes the requests in
    flight, hands its run back to the queue for another worker to take at once, and exits.
    """
    import signal
    import threading

    from annotator.cli._progress import log_lines
    from annotator.database.engine import get_engine
    from annotator.runs import RunError, hand_back, stale_after
    from annotator.runs.workers import serve

    chosen = _kinds(kinds)
    stale_after(strict=True)  # a bad ANNOTATOR_HEARTBEAT_TIMEOUT is told now, in one line
    stop = threading.Event()

    def stop_and_hand_back(*_: object) -> None:
        stop.set()
        hand_back()

    signal.signal(signal.SIGTERM, stop_and_hand_back)
    try:
        ended = serve(get_engine(), kinds=chosen, once=once or run_id is not None, run_id=run_id, poll_seconds=poll,
                      say=lambda line: typer.echo(line), progress=log_lines, stop=stop)
    except RunError as exc:
        fail(str(exc), 2)
    if (once or run_id is not None) and (not ended or any(status != "succeeded" for status in ended)):
        raise typer.Exit(1)


def _row(run: Any, parts: list[Any] | None = None) -> dict[str, Any]:
    """A run's row; a job's with its parts (how many of them are in each status, the workers that hold or held
    them, and a row each). A run whose process has ended is "stale", not queued or running (`stale`: why)."""
    from annotator.runs import heartbeat_age, stale_reason

    age = heartbeat_age(run) if run.status in ("queued", "running") else None
    reason = stale_reason(run)
    row = {
        "run": run.id, "kind": run.kind, "status": "stale" if reason else run.status, "stale": reason,
        "done": run.problems_done, "total": run.problems_total, "worker": run.worker,
        "heartbeat_age_seconds": None if age is None else round(age.total_seconds(), 1),
        "cancel_requested": run.cancel_requested, "created_by": run.created_by,
        "created_at": run.created_at.isoformat(), "finished_at": run.finished_at and run.finished_at.isoformat(),
        "message": run.message,
    }
    if parts:
        part_runs = [{**_row(part), "part": number} for number, part in enumerate(parts, 1)]
        statuses = [part["status"] for part in part_runs]
        row["parts"] = {"count": len(parts),
                        "by_status": {status: statuses.count(status) for status in dict.fromkeys(statuses)},
                        "workers": list(dict.fromkeys(part.worker for part in parts if part.worker))}
        row["part_runs"] = part_runs
    return row


def _lines(row: dict[str, Any], *, kind: str, run: str) -> tuple[str, ...]:
    return (
        run, kind, row["status"] + (" (cancelling)" if row["cancel_requested"] and row["status"] == "running" else ""),
        f"{row['done']}/{row['total']}", row["worker"] or "-",
        "-" if row["heartbeat_age_seconds"] is None else f"{row['heartbeat_age_seconds']:g} s ago",
        row["created_by"] or "-",
    )


def _parts_text(parts: dict[str, Any] | None) -> str:
    if not parts:
        return ""
    counts = ", ".join(f"{n} {status}" for status, n in parts["by_status"].items())
    return f" ({parts['count']} parts: {counts})"


def _text(rows: list[dict[str, Any]], workers: list[dict[str, Any]]) -> str:
    if not rows:
        lines = ["no runs"]
    else:
        table = [("run", "kind", "status", "done", "worker", "heartbeat", "by")]
        for row in rows:
            table.append(_lines(row, run=str(row["run"]), kind=row["kind"] + _parts_text(row.get("parts"))))
            table += [_lines(part, run=f"  {part['run']}", kind=f"  part {part['part']} of {len(row['part_runs'])}")
                      for part in row.get("part_runs", [])]
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
    workers. A run is stale, not running, once its process on this machine has ended, or (a worker elsewhere) once
    its heartbeat is older than ANNOTATOR_HEARTBEAT_TIMEOUT seconds. A job split into parts is listed with its parts
    under it."""
    from annotator.database.engine import get_engine, read_session
    from annotator.runs import recent_runs
    from annotator.runs.health import live_workers
    from annotator.runs.parts import job_parts

    with read_session(get_engine()) as session:
        recent = recent_runs(session, limit=limit)
        parts = job_parts(session, [run.id for run in recent if run.parts])
        rows = [_row(run, parts.get(run.id)) for run in recent]
        workers = [{"worker": w.id, "kinds": w.kinds} for w in live_workers(session)]
    typer.echo(json.dumps({"runs": rows, "workers": workers}, indent=2) if as_json else _text(rows, workers))
