"""What the benches share about background work and the interpreter they start.

`kg` hands large graph.html renders to a detached low-priority process. A bench step that times
an update measures the update; it waits for the previous step's render to finish first (and says
so), and times that render on its own.

The benches start `kg` the way an installed package runs: with its bytecode cached. A machine
that sets PYTHONDONTWRITEBYTECODE would make every process recompile every module instead.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from vault_kg.html_job import rendering


def kg_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def settle(out: Path, timeout: float = 600.0) -> float:
    """Wait until no graph.html render runs or waits in `out`, and no background refresh started
    by a session start runs on its scope; the seconds waited."""
    from hooks.reconcile import running

    start = time.perf_counter()
    time.sleep(0.2)  # a render spawned just now may not hold its lock yet
    while (rendering(out) or running(out.parent)) and time.perf_counter() - start < timeout:
        time.sleep(0.05)
    return time.perf_counter() - start
