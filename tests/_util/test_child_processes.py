"""A killed `judge` leaves no worker processes behind: its pool dies with it, even on SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from annotator.database.engine import get_engine
from tests.conftest import PROJECT_ROOT
from tests.support.transcripts import add_transcripts
from tests.support.waiting import wait_for

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")


def _children(pid: int) -> set[int]:
    """Live processes whose parent is `pid`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's wait is missing


def _workers(pid: int) -> set[int]:
    """The pool's worker processes among `pid`'s children (the resource tracker is also a child)."""
    return {child for child in _children(pid) if b"--multiprocessing-fork" in _cmdline(child)}


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_sigkilling_judge_leaves_no_worker_processes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'judge.sqlite'}"
    add_transcripts(get_engine(url), [{"response": f"We get $x = {n}$, so the answer is $\\boxed{{{n}}}$."}
                                      for n in range(6000)])
    judge = subprocess.Popen(
        [sys.executable, "-m", "annotator", "judge", "--workers", "2"], cwd=PROJECT_ROOT,
        env={**os.environ, "ANNOTATOR_DATABASE_URL": url}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    others: set[int] = set()
    try:
        wait_for(lambda: len(_workers(judge.pid)) == 2, 60, "two pool workers")
        workers, others = _workers(judge.pid), _children(judge.pid)
        assert judge.poll() is None, "judge finished before it could be killed: give it more transcripts"
        judge.send_signal(signal.SIGKILL)
        judge.wait(timeout=10)
        wait_for(lambda: not any(_alive(pid) for pid in others), 10, f"the workers {sorted(others)} to exit")
        assert workers <= others
    finally:
        if judge.poll() is None:
            judge.kill()
        for pid in others:  # orphans a failed test would leave
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_without_the_kernel_s_help_the_parent_watch_ends_the_worker(tmp_path: Path) -> None:
    """Where `prctl` is missing (not Linux), the polling thread alone ends a worker whose parent was killed."""
    worker = (
        "import os, sys, threading; import annotator._util.child_processes as child_processes; "
        "child_processes._ask_the_kernel = lambda: None; child_processes.die_with_parent(os.getppid()); "
        "print(os.getpid(), flush=True); threading.Event().wait(120)"
    )
    parent = (
        "import subprocess, sys; child = subprocess.Popen([sys.executable, '-c', sys.argv[1]], stdout=sys.stdout); "
        "child.wait()"
    )
    process = subprocess.Popen([sys.executable, "-c", parent, worker], cwd=PROJECT_ROOT, stdout=subprocess.PIPE,
                               text=True)
    child = 0
    try:
        assert process.stdout is not None
        child = int(process.stdout.readline())
        assert _alive(child)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        wait_for(lambda: not _alive(child), 10, "the worker to notice its parent is gone")
    finally:
        if process.poll() is None:
            process.kill()
        if child and _alive(child):
            os.kill(child, signal.SIGKILL)
