"""Child processes whose pid must stay theirs after they exit."""

from __future__ import annotations

import os
import signal
import subprocess


def wait_unreaped(process: subprocess.Popen[bytes]) -> int:
    """Wait until `process` has exited without reaping it: it stays a zombie, and its pid is given to no other process,
    until `process.wait()`. Returns its exit status as `Popen.returncode` gives it (-N: killed by signal N)."""
    info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
    assert info is not None
    killed = info.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
    return -signal.Signals(info.si_status) if killed else info.si_status
