"""Who holds a run, as a process: the name a process writes on the runs it claims (`holder_id`), and whether the
process a name stands for has ended (`ended`).

A holder's name is "host:pid:started.place": `started` is the process's start time (clock ticks since boot, field
22 of /proc/<pid>/stat), so that a pid the kernel has given to another process since is not taken for the holder;
`place` stands for the machine's boot and the pid namespace, the only place where that pid names that process (a
container has pids of its own, a reboot starts them again). On that place a run whose holder has ended is dead at
once; anywhere else a name says nothing about the process and the heartbeat decides (`health.stale_reason`). Where
there is no /proc the name is "host:pid:random" and only the heartbeat tells.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import uuid
from functools import cache
from pathlib import Path

_PROC = Path("/proc")
_NAME = re.compile(r"(?P<host>[^:]*):(?P<pid>\d+):(?P<started>\d+)\.(?P<place>[0-9a-f]{12})")


def _stat(pid: int | str) -> list[str]:
    """The fields of /proc/<pid>/stat after the command's name: [state, ppid, ...] (field 3 on)."""
    return (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()


def process_started(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot), or None when it is not there to read."""
    try:
        return int(_stat(pid)[19])
    except (OSError, IndexError, ValueError):
        return None


@cache
def _place() -> str | None:
    """This machine's boot and pid namespace, as 12 hex digits; None when /proc does not describe this process."""
    try:
        if os.readlink(_PROC / "self") != str(os.getpid()):
            return None  # a /proc of another pid namespace
        boot = (_PROC / "sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat(_PROC / "self/ns/pid")
    except OSError:
        return None
    return hashlib.sha256(f"{boot}:{namespace.st_dev}:{namespace.st_ino}".encode()).hexdigest()[:12]


def _host() -> str:
    return socket.gethostname()[:120].replace(":", "-")


def _holder_id(pid: int) -> str:
    place, started = _place(), process_started(pid)
    if place is None or started is None:
        return f"{_host()}:{pid}:{uuid.uuid4().hex[:8]}"
    return f"{_host()}:{pid}:{started}.{place}"


@cache
def _own_id(pid: int) -> str:
    return _holder_id(pid)


def holder_id(pid: int | None = None) -> str:
    """This process's name on the runs it holds (one per process: a forked child has a name of its own), or the
    name process `pid` of this machine would write now."""
    return _own_id(os.getpid()) if pid is None else _holder_id(pid)


def here_suffix() -> str | None:
    """How the names of this place's holders end (".place"), for a query; None where names say nothing."""
    place = _place()
    return None if place is None else f".{place}"


def _running(pid: int, started: int) -> bool:
    """Whether process `pid` is there, has not exited (a zombie has) and started at `started`."""
    try:
        fields = _stat(pid)
    except OSError:  # gone, or hidden from this user (hidepid): kill() tells which
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return fields[0] not in ("Z", "X") and fields[19:20] == [str(started)]


def ended(worker: str | None) -> list[int]:
    """The pids of the holders `worker` names (one, or a job's parts' holders, comma-separated) when every one of
    them ran on this machine's place and has ended; [] when one of them may be alive or is elsewhere (or the name
    says nothing: then the heartbeat decides)."""
    names = [name.strip() for name in (worker or "").split(",") if name.strip()]
    suffix, host = here_suffix(), _host()
    pids: list[int] = []
    for name in names:
        match = _NAME.fullmatch(name)
        if suffix is None or match is None or match["host"] != host or not name.endswith(suffix):
            return []
        pid, started = int(match["pid"]), int(match["started"])
        if _running(pid, started):
            return []
        pids.append(pid)
    return pids
