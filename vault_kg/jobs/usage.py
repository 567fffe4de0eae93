"""One line per background job in its log: what the work a hook left cost (benches read it).

`kg` hands the clustering, a hook's deferred ranks and artifacts, and large graph.html renders to
detached processes; nothing else counts their time, so each says it at exit, in its own log under
`kg-out/`: `kg job communities: 0.84 s wall, 0.61 s CPU`.
"""

from __future__ import annotations

import re
import resource
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

LINE = re.compile(r"^kg job (?P<name>[\w.-]+): (?P<wall>[\d.]+) s wall, (?P<cpu>[\d.]+) s CPU$", re.M)


@contextmanager
def reported(name: str) -> Iterator[None]:
    """Print the block's wall time and the process's CPU time (its children's too) when it ends."""
    started = time.perf_counter()
    try:
        yield
    finally:
        cpu = sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for field in ("ru_utime", "ru_stime"))
        print(f"kg job {name}: {time.perf_counter() - started:.3f} s wall, {cpu:.3f} s CPU", flush=True)


def jobs_in(log: Path, offset: int = 0) -> list[tuple[str, float, float]]:
    """(name, wall s, CPU s) of each job line in `log` past `offset` bytes."""
    try:
        with log.open("rb") as handle:
            handle.seek(offset)
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return []
    return [(m["name"], float(m["wall"]), float(m["cpu"])) for m in LINE.finditer(text)]
