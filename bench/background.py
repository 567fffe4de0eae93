"""What the benches share about background work and the interpreter they start.

`kg` hands large graph.html renders, and after a hook the clustering, to detached low-priority
processes. A bench step that times an update measures the update; it waits for the previous
step's background work to finish first (and says so), and times that render on its own.

The benches start `kg` the way an installed package runs: with its bytecode cached. A machine
that sets PYTHONDONTWRITEBYTECODE would make every process recompile every module instead.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from vault_kg.jobs.clustering import running as clustering
from vault_kg.jobs.html_render import rendering


def kg_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def settle(out: Path, timeout: float = 600.0) -> float:
    """Wait until no graph.html render, no background clustering and no background refresh started
    by a session start runs or waits in `out` or on its scope; the seconds waited."""
    from vault_kg.jobs.reconcile import running

    start = time.perf_counter()
    busy = lambda: rendering(out) or clustering(out) or running(out.parent)  # noqa: E731
    idle = 0
    while idle < 2 and time.perf_counter() - start < timeout:
        # a job spawned just now may not hold its lock yet, and a job ending may spawn the next
        # (the clustering job's update starts a graph.html render): idle twice, 0.2 s apart
        time.sleep(0.2)
        idle = 0 if busy() else idle + 1
    return time.perf_counter() - start


def processes_mentioning(text: str) -> list[int]:
    """The processes (not this one) whose command line holds `text`: the jobs kg started from a
    bench's temporary folder, whose path is in their arguments."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmd:
            found.append(int(proc.name))
    return found


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a running process (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop_processes_mentioning(text: str) -> None:
    """Kill what `processes_mentioning` finds: a bench leaves nothing running, also when it fails."""
    for pid in processes_mentioning(text):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
