"""Servers in child processes, each on a port of its own, safe when several test processes start servers at once.

A port found free is only a candidate: another process (another pytest worker's server, any outgoing
connection) may take it before the child binds it. So the child is started, and the port counts as its own only
once the child itself is listening there (Linux /proc); a child that could not bind it is started again on a
fresh candidate. A server answering on the port is not proof enough: it may be someone else's.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

ATTEMPTS = 5
# What the servers started here (Streamlit, PostgreSQL, uvicorn) say when the port is taken.
PORT_TAKEN = re.compile(r"in use|not available", re.IGNORECASE)


def candidate_port() -> int:
    """A port that was free a moment ago (nothing holds it for the caller)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process `pid` listens on (its own sockets, not its network namespace's)."""
    sockets: set[str] = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:  # closed meanwhile
                continue
            if target.startswith("socket:["):
                sockets.add(target[len("socket:[") : -1])
    except OSError:  # the process has gone
        return set()
    ports: set[int] = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in sockets:  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def start_listening(
    launch: Callable[[int], subprocess.Popen[bytes]], log: Path, *, what: str, timeout: float = 60
) -> tuple[subprocess.Popen[bytes], int]:
    """Start a server with `launch(port)` (its output in `log`) until it listens on that port; return it and the port.

    Raises:
        RuntimeError: it exited for another reason than a taken port, did not listen within `timeout` seconds,
            or found its port taken `ATTEMPTS` times.
    """
    for _ in range(ATTEMPTS):
        port = candidate_port()
        process = launch(port)
        deadline = time.monotonic() + timeout
        while port not in listening_ports(process.pid):
            if process.poll() is not None:
                break
            if time.monotonic() > deadline:
                stop(process)
                raise RuntimeError(f"{what} did not listen on port {port} in {timeout:.0f} s: {tail(log)}")
            time.sleep(0.05)
        else:
            return process, port
        if not PORT_TAKEN.search(tail(log)):
            raise RuntimeError(f"{what} exited with {process.returncode}: {tail(log)}")
    raise RuntimeError(f"{what} found its port taken {ATTEMPTS} times: {tail(log)}")


def stop(process: subprocess.Popen[bytes], timeout: float = 10) -> None:
    """Terminate `process`; kill it if it has not ended after `timeout` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def tail(log: Path, size: int = 2000) -> str:
    return log.read_text(errors="replace")[-size:] if log.exists() else "(no output)"
