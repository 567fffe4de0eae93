"""The model pass never slows the graph: whole `kg` processes on the generated vault (default
10,000 notes) in the three model states, side by side.

    python bench/llm_worker_bench.py [--notes 10000] [--delay 1.0]
    python bench/llm_worker_bench.py --alternate 7    # off against "not running", run by run


- off: `KG_OLLAMA=off`;
- not running: the model pass on, nothing listening on the Ollama port;
- running stand-in: the model pass on, `tests/ollama_fake.py` as a process answering one chat at
  a time after `--delay` seconds, so the background worker stays busy for the whole run.

For each state, on its own copy of the vault: cold `kg build` (the build returns once graph.json
is written; the model pass goes on in the background), no-op `kg update`, one-note `kg update`
(median of 3; the no-op median of 5), then `kg hook post-tool-use` on an edited note (median of 3) and `kg query`
(median of 3). Detached work is counted, not hidden: before each timed step the bench waits for a
worker that is not running the model (state "not running": it starts, finds no server, records
the back-off and exits) to finish, and says how many requests the stand-in saw during each step.
graph.html is off in every state (KG_HTML=off), so renders do not blur the figures.

The states above run one after the other, so a drift of the machine between them shows as a
difference. `--alternate N` compares "off" with "not running" the other way: both vaults are
built first, then each step (no-op update, one-note update, query) runs N times in each state,
alternating, and the medians and their ratio are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_vault import generate  # noqa: E402

from vault_kg.jobs.model_worker import running  # noqa: E402

KG = [sys.executable, "-c", "from vault_kg.cli.entry import main; main()"]


def closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def timed(env: dict[str, str], *args: str, stdin: str | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run([*KG, *args], env=env, capture_output=True, text=True, input=stdin)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"kg {' '.join(args)} failed: {done.stderr.strip()[-800:]}")
    return elapsed


def settle(out: Path, busy_ok: bool) -> None:
    """Wait for a worker that is not the busy model run (it exits by itself)."""
    if busy_ok:
        return
    time.sleep(0.3)
    deadline = time.monotonic() + 120
    while running(out) and time.monotonic() < deadline:
        time.sleep(0.1)


def requests(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def run_state(state: str, source: Path, work: Path, delay: float) -> dict[str, object]:
    vault = work / state.replace(" ", "-") / "vault"
    shutil.copytree(source, vault)
    out = vault / "kg-out"
    env = {k: v for k, v in os.environ.items() if k not in ("KG_VAULT", "KG_MODEL", "PYTHONDONTWRITEBYTECODE")}
    env.update(KG_CONFIG=str(vault.parent / "config.toml"), KG_HTML="off", OPENBLAS_NUM_THREADS="1")
    (vault.parent / "config.toml").write_text(f'vault = "{vault}"\n')
    log = vault.parent / "requests.jsonl"
    standin = None
    if state == "off":
        env["KG_OLLAMA"] = "off"
    elif state == "not running":
        env.update(KG_OLLAMA="on", OLLAMA_HOST=closed_port())
    else:
        standin = subprocess.Popen([sys.executable, str(ROOT / "tests" / "ollama_fake.py"), "--delay", str(delay), "--log", str(log)], stdout=subprocess.PIPE, text=True)
        assert standin.stdout is not None
        env.update(KG_OLLAMA="on", OLLAMA_HOST=standin.stdout.readline().split()[-1])
    busy = standin is not None
    figures: dict[str, object] = {}
    try:
        figures["cold build (graph.json written)"] = timed(env, "build", "--vault", str(vault))
        settle(out, busy)
        if busy:
            deadline = time.monotonic() + 60
            while not running(out) and time.monotonic() < deadline:
                time.sleep(0.1)
            figures["worker"] = "busy" if running(out) else "not running"
        seen = requests(log)
        figures["no-op update"] = statistics.median(timed(env, "update", "--vault", str(vault)) for _ in range(5))
        settle(out, busy)
        notes = sorted(vault.glob("area0*/*.md"))
        edits = []
        for i in range(3):
            note = notes[i]
            note.write_text(note.read_text() + f"\nEdited by the bench ({i}), see [[Another Page {i}]].\n")
            edits.append(timed(env, "update", str(note), "--vault", str(vault)))
            settle(out, busy)
        figures["one-note update"] = statistics.median(edits)
        hooks = []
        for i in range(3):
            note = notes[10 + i]
            note.write_text(note.read_text() + f"\nEdited in a session ({i}).\n")
            payload = {"session_id": "bench", "cwd": str(vault), "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(note)}}
            hooks.append(timed(env, "hook", "post-tool-use", stdin=json.dumps(payload)))
            settle(out, busy)
        figures["PostToolUse, one note"] = statistics.median(hooks)
        queries = ["payments retry webhook", "postgres migration schema", "incident runbook alert"]
        figures["query"] = statistics.median(timed(env, "query", q, "--vault", str(vault), "--budget", "1500") for q in queries)
        figures["stand-in requests during the run"] = requests(log) - seen if busy else "-"
        figures["still busy at the end"] = bool(running(out)) if busy else "-"
    finally:
        if busy:
            subprocess.run([*KG, "llm", "stop", "--vault", str(vault)], env=env, capture_output=True)
            standin.terminate()
            standin.wait(10)
        settle(out, False)
    return figures


def alternate(source: Path, work: Path, runs: int) -> None:
    """Off against "not running", alternated run by run on two copies of the same vault."""
    envs, vaults = {}, {}
    for state in ("off", "not running"):
        vault = work / state.replace(" ", "-") / "vault"
        shutil.copytree(source, vault)
        env = {k: v for k, v in os.environ.items() if k not in ("KG_VAULT", "KG_MODEL", "PYTHONDONTWRITEBYTECODE")}
        env.update(KG_CONFIG=str(vault.parent / "config.toml"), KG_HTML="off")
        if state == "off":
            env["KG_OLLAMA"] = "off"
        else:
            env.update(KG_OLLAMA="on", OLLAMA_HOST=closed_port())
        subprocess.run([*KG, "build", "--vault", str(vault)], env=env, capture_output=True, check=True)
        settle(vault / "kg-out", False)
        envs[state], vaults[state] = env, vault
    times: dict[str, dict[str, list[float]]] = {step: {"off": [], "not running": []} for step in ("no-op update", "one-note update", "query")}
    for i in range(runs):
        for state in ("off", "not running"):
            env, vault = envs[state], vaults[state]
            times["no-op update"][state].append(timed(env, "update", "--vault", str(vault)))
            note = sorted(vault.glob("area0*/*.md"))[i]
            note.write_text(note.read_text() + f"\nEdited by the bench ({i}).\n")
            times["one-note update"][state].append(timed(env, "update", str(note), "--vault", str(vault)))
            settle(vault / "kg-out", False)
            times["query"][state].append(timed(env, "query", "payments retry webhook", "--vault", str(vault), "--budget", "1500"))
    print(f"alternated {runs} times; load average {os.getloadavg()[0]:.1f}")
    print(f"{'median seconds':<20}{'off':>10}{'not running':>14}{'ratio':>8}")
    for step, by_state in times.items():
        off, on = statistics.median(by_state["off"]), statistics.median(by_state["not running"])
        print(f"{step:<20}{off:>10.3f}{on:>14.3f}{on / off:>7.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--alternate", type=int, default=0, help="compare off and not running, alternated N times")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kg-worker-bench-"))
    try:
        source = work / "source"
        generate(source, args.notes, seed=7)
        if args.alternate:
            alternate(source, work, args.alternate)
            return
        results = {state: run_state(state, source, work, args.delay) for state in ("off", "not running", "running stand-in")}
        print(f"vault: {args.notes} generated notes; stand-in: tests/ollama_fake.py, one chat at a time, {args.delay} s per call; load average {os.getloadavg()[0]:.1f}")
        names = [k for k in results["off"] if k not in ("worker",)]
        print(f"{'figure (seconds, whole processes)':<36}" + "".join(f"{s:>20}" for s in results))
        for name in names:
            cells = []
            for state in results:
                value = results[state].get(name, "-")
                cells.append(f"{value:>20.2f}" if isinstance(value, float) else f"{str(value):>20}")
            print(f"{name:<36}" + "".join(cells))
        off = results["off"]
        for state in ("not running", "running stand-in"):
            ratios = ", ".join(f"{k} {results[state][k] / off[k]:.2f}x" for k in names if isinstance(off.get(k), float) and isinstance(results[state].get(k), float))
            print(f"{state} / off: {ratios}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("llm_worker_bench"):
        main()
