"""Background LLM runs of any kind (`RunKind`): candidate generation, transcript collection.

A run is a `Run` row. The app or the CLI creates it queued (`create_run`); a worker claims it (`claim_next`:
`python -m annotator worker`, on any machine; the app starts one for the run when no worker serves its kind:
`start`), or the CLI itself does (`claim_run`); it opens its client and works through its items (`run_to_end`
around `work_through`), writes its counters as a heartbeat (`RunProgress.save`, which also tells it whether
someone asked it to stop: `request_cancel`), and finishes with a `RunStatus` (`outcome`, `RunProgress.finish`)
and a `Summary`. A running run whose heartbeat stopped is stale (`stale_reason`, after `stale_after()`): a worker
takes it over and resumes it, or an admin marks it failed (`fail_stale`).

Adding a kind: a `RunKind` value and its line in `kinds.KINDS`, the one list; its module declares its
`RunKindSpec` (options, create, describe, execute), with a `RunProgress` subclass for its own counters (and a
`Summary` subclass), and a CLI command of its name that parses its options and calls
`annotator.cli._runs.create_and_execute`.

Modules: `kinds` (what each kind is, the list), `lifecycle` (create: at most one active run per settings; claim,
cancel, fail), `health` (stale or alive, listing, describe), `workers` (the loop executing runs, the heartbeat
thread), `claiming` (claiming a run; a job's parts in one process: `splittable`), `parts` (a big job split into
parts that several workers take; the job's row the sum of theirs), `background` (the process), `progress`
(counters, heartbeat, summary), `execution` (a run's body: client, concurrent tasks, outcome; a stopped worker's
hand-back).
"""

from annotator.runs.background import log_path, log_tail, start, start_background
from annotator.runs.execution import (
    ItemHandler,
    interrupted,
    outcome,
    request_run,
    run_requests,
    run_to_end,
    short_switch_interval,
    work_through,
)
from annotator.runs.health import (
    FAILED,
    FROM_CACHE,
    REQUESTS_SENT,
    RETRIES,
    STALE_AFTER,
    START_TIMEOUT,
    TOKENS,
    UNREADABLE,
    describe,
    heartbeat_age,
    is_active,
    is_stale,
    process_alive,
    recent_runs,
    stale_after,
    stale_reason,
)
from annotator.runs.lifecycle import (
    DuplicateRunError,
    ResumableRunError,
    RunError,
    claim_next,
    claim_run,
    create_run,
    fail_stale,
    hand_back,
    request_cancel,
    resume_run,
    worker_id,
)
from annotator.runs.progress import MAX_STORED_ERRORS, RunProgress, Summary

__all__ = [
    "FAILED", "FROM_CACHE", "MAX_STORED_ERRORS", "REQUESTS_SENT", "RETRIES", "STALE_AFTER", "START_TIMEOUT", "TOKENS",
    "UNREADABLE", "DuplicateRunError", "ItemHandler", "ResumableRunError", "RunError", "RunProgress", "Summary",
    "claim_next", "claim_run", "create_run", "describe", "fail_stale", "hand_back", "heartbeat_age", "interrupted",
    "is_active", "is_stale", "log_path", "log_tail", "outcome", "process_alive", "recent_runs", "request_cancel",
    "request_run", "resume_run", "run_requests", "run_to_end", "short_switch_interval", "stale_after",
    "stale_reason", "start", "start_background", "work_through", "worker_id",
]
