"""The memory of a process and all its descendants together, sampled while it runs (Linux /proc).

`ru_maxrss` from `wait4` is the peak of the largest single process, so a build that forks worker
processes would look smaller than it is. `TreeMemory(pid)` samples every `interval` seconds the
sum over the process tree of RSS (pages shared after a fork counted in every process: an upper
bound) and of PSS (shared pages split between their sharers: what the tree adds to the machine),
and keeps the peaks. Where /proc is missing both stay 0.
"""

from __future__ import annotations

import threading
from pathlib import Path


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            kids += [int(k) for k in task.read_text().split()]
        except OSError:
            pass
    return kids


def _tree(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += _children(current)
    return found


def _kb(path: str, field: str) -> int:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class TreeMemory:
    """Peak summed RSS and PSS (MB) of `pid` and its descendants, sampled in a thread until `stop()`."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid, self.interval = pid, interval
        self.rss_mb = self.pss_mb = 0.0
        self.most_processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            pids = _tree(self.pid)
            rss = sum(_kb(f"/proc/{p}/status", "VmRSS:") for p in pids) / 1024
            pss = sum(_kb(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids) / 1024
            self.rss_mb, self.pss_mb = max(self.rss_mb, rss), max(self.pss_mb, pss)
            self.most_processes = max(self.most_processes, len([p for p in pids if Path(f"/proc/{p}").exists()]))
            self._stop.wait(self.interval)

    def stop(self) -> "TreeMemory":
        self._stop.set()
        self._thread.join()
        return self
