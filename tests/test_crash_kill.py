"""Crash safety: `kg build` / `kg update` killed with SIGKILL at random moments on a 500-note vault.

Every kill lands while the run writes: the test watches the process (Linux's /proc) until it holds
the scope's lock and has written more than a few bytes (the cache's WAL frames, an artifact's
temp file), then kills it at a random moment of the writing window measured on a completed run of
the same command. A kill during interpreter start-up, imports or the read-only no-op probe is not
counted. After each kill every artifact (graph.json, GRAPH_REPORT.md, brief.json, graph.html) is
either the bytes from before the run or the bytes the completed run writes, never partial; the
cache opens without being recreated and passes SQLite's integrity check; and the next `kg update`
reaches the from-scratch result. CI does a bounded number of kills (about 40 s); with
`KG_SOAK_SECONDS=N` the loop runs N seconds and compares with a fresh build after every kill.
"""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson

from robust_corpus import canonical, first_difference, fresh_build
from vault_kg.storage.cache import ScopeCache
from vault_kg.update.engine import run
from vault_kg.core.scopes import Scope, vault_scope
from vault_kg.storage.layout import Layout

REPO = Path(__file__).resolve().parents[1]
SOAK_SECONDS = float(os.environ.get("KG_SOAK_SECONDS", "0") or 0)
CI_SECONDS = 32.0
ARTIFACTS = ("graph.json", "GRAPH_REPORT.md", "brief.json", "graph.html")


def generate_vault(root: Path, notes: int, seed: int) -> None:
    spec = importlib.util.spec_from_file_location("gen_vault", REPO / "bench" / "gen_vault.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.generate(root, notes, seed)


def artifacts(out: Path) -> dict[str, bytes | None]:
    found: dict[str, bytes | None] = {}
    for name in ARTIFACTS:
        try:
            found[name] = (out / name).read_bytes()
        except FileNotFoundError:
            found[name] = None
    return found


def mutate(vault: Path, rng: random.Random) -> Path:
    """A handful of edits of the kinds a day brings; returns one edited note (for `kg update PATH`)."""
    notes = sorted(vault.rglob("*.md"))
    edited = rng.choice(notes)
    for path in [edited, *rng.sample(notes, rng.randint(0, 5))]:
        path.write_text(path.read_text() + f"\nMore about [[{rng.choice(notes).stem}]] and #topic/new{rng.randrange(5)}.\n")
    if rng.random() < 0.3:
        victim = rng.choice(notes)
        if victim != edited:
            victim.unlink()
    if rng.random() < 0.3:
        (vault / "area00" / f"Fresh {rng.randrange(10**6)}.md").write_text(f"---\nsummary: new\n---\nLinks to [[{rng.choice(notes).stem}]]\n")
    if rng.random() < 0.15:
        (vault / "area01" / "Broken yaml.md").write_text("---\nsummary: [oops\n---\nbody\n")
    return edited


def start_kg(args: list[str], vault: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", *args, "--vault", str(vault)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )


def assert_cache_sound(scope: Scope) -> None:
    db = Layout(scope.out).cache_db
    con = sqlite3.connect(str(db))
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()
    cache = ScopeCache(db)
    try:
        assert not cache.recreated, "the cache was unreadable after a kill and had to be rebuilt"
        assert cache.stats(), "the cache lost its sources"
    finally:
        cache.close()


# a process has started writing once it holds the scope's lock and has passed this many bytes to
# write(2): the lock file and SQLite's headers are a few bytes; WAL frames and artifacts are KBs
WRITING_BYTES = 1024
COMMANDS = (("update",), ("update", "PATH"), ("build", "--force"))


def written_bytes(pid: int) -> int | None:
    """Bytes `pid` has written while holding the scope lock (None: not holding it, or gone)."""
    try:
        if not any(os.readlink(f"/proc/{pid}/fd/{fd}").endswith("/kg-out/.lock") for fd in os.listdir(f"/proc/{pid}/fd")):
            return None
        return int(next(line.split()[1] for line in Path(f"/proc/{pid}/io").read_text().splitlines() if line.startswith("wchar:")))
    except (OSError, StopIteration, ValueError):
        return None


def wait_until_writing(proc: subprocess.Popen[bytes], timeout: float = 300) -> float | None:
    """The moment (monotonic) `proc` started writing under the lock; None if it ended first."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        if (written_bytes(proc.pid) or 0) > WRITING_BYTES:
            return time.monotonic()
        time.sleep(0.001)
    return None


def writing_window(vault: Path, rng: random.Random, command: tuple[str, ...], tries: int = 5) -> float:
    """How long `command` writes before it exits, measured on a completed run (a loaded machine
    can keep the watcher off the CPU for a short write: a few tries)."""
    for _ in range(tries):
        edited = mutate(vault, rng)
        proc = start_kg([str(edited) if a == "PATH" else a for a in command], vault)
        began = wait_until_writing(proc)
        assert proc.wait(timeout=300) == 0, proc.stderr.read().decode() if proc.stderr else ""
        if began is not None:
            return time.monotonic() - began
    raise AssertionError(f"kg {' '.join(command)} was never seen writing in {tries} runs (watched through /proc)")


def kill_rounds(tmp: Path, seconds: float, fresh_every_round: bool, seed: int, at_least: int = 0, give_up: float = 600) -> dict[str, int]:
    """SIGKILL rounds for `seconds`; then more, while fewer than `at_least` kills landed while the
    run was writing, until `give_up` seconds: a slow, shared machine gets more time, not a flake."""
    vault = tmp / "vault"
    generate_vault(vault, 500, seed)
    scope = vault_scope(vault)
    run(scope)
    rng = random.Random(seed)
    started = time.monotonic()
    windows = {command: writing_window(vault, rng, command) for command in COMMANDS}
    totals = {"kills": 0, "killed_while_writing": 0, "finished_before_kill": 0, "leftover_temp_files": 0, "fresh_checks": 0}
    deadline, hard = started + seconds, started + max(seconds, give_up)

    def more() -> bool:
        now = time.monotonic()
        return now < deadline or (totals["killed_while_writing"] < at_least and now < hard)

    while more():
        before = artifacts(scope.out)
        edited = mutate(vault, rng)
        command = rng.choice(COMMANDS)
        args = [str(edited) if a == "PATH" else a for a in command]
        proc = start_kg(args, vault)
        began = wait_until_writing(proc)
        if began is not None:
            time.sleep(max(0.0, began + rng.uniform(0.0, windows[command] * 0.9) - time.monotonic()))
        proc.send_signal(signal.SIGKILL)
        code = proc.wait(timeout=60)
        totals["kills"] += 1
        totals["killed_while_writing" if began is not None and code == -signal.SIGKILL else "finished_before_kill"] += 1
        after_kill = artifacts(scope.out)
        for name in ("graph.json", "brief.json"):
            orjson.loads(after_kill[name] or b"")  # parseable, whatever the moment
        assert_cache_sound(scope)
        run(scope, paths=[edited] if "PATH" in command else None, force=args[0] == "build")  # the killed command, completed
        completed = artifacts(scope.out)
        for name in ARTIFACTS:
            assert after_kill[name] in (before[name], completed[name]), f"{name} after a kill ({args}) is neither the old nor the new state"
        run(scope)  # a hook-style `update PATH` leaves the other edits for the next full update
        totals["leftover_temp_files"] = len([p for p in scope.out.iterdir() if p.name.endswith(".tmp")])
        if fresh_every_round:
            incremental, fresh = canonical(scope.out), fresh_build(scope, tmp / "fresh")
            assert incremental == fresh, first_difference(incremental, fresh)
            totals["fresh_checks"] += 1
    incremental, fresh = canonical(scope.out), fresh_build(scope, tmp / "fresh")
    assert incremental == fresh, first_difference(incremental, fresh)
    totals["fresh_checks"] += 1
    return totals


def test_sigkill_leaves_old_or_new_artifacts_and_update_recovers(tmp_path: Path) -> None:
    seconds = SOAK_SECONDS or CI_SECONDS
    totals = kill_rounds(tmp_path, seconds, fresh_every_round=bool(SOAK_SECONDS), seed=int(os.environ.get("KG_SOAK_SEED", "7")), at_least=3)
    print(f"crash: {totals}")
    assert totals["killed_while_writing"] >= 3, f"fewer than 3 kills landed while a run was writing: {totals}"
    assert totals["leftover_temp_files"] == 0, "killed writers left temp files in kg-out that no later run removes"
