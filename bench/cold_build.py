"""Cold `kg build` of a generated vault, whole processes, variants alternated round by round.

Usage: python bench/cold_build.py [--notes 10000 | --vault DIR] [--rounds 3] [--checkout NAME=DIR ...] [--model-pass]

Each round builds the same vault from scratch (`kg-out/` deleted first) once per variant, in turn,
so every variant sees the same load on the machine: this checkout with its default extraction
workers, this checkout with `KG_EXTRACT_WORKERS=1` (one process), and every `--checkout NAME=DIR`
(another source tree, e.g. `git worktree add /tmp/main main`, run through PYTHONPATH=DIR with the
same interpreter). For each it prints the medians of wall time and CPU (user + system of the build
and every process it waited for), the build process's own peak RSS (`ru_maxrss`, what
vault_bench.py prints), and the peak of the whole process tree sampled every 50 ms (summed RSS,
shared pages counted in every process; summed PSS, shared pages split). graph.html is off
(`KG_HTML=off`): its detached render is a process of its own, timed by vault_bench.py. It then
checks that every variant wrote the same graph.json. The model pass is off (`KG_OLLAMA=off`), or
with `--model-pass` on with no server to answer it (a new user's default before `ollama serve`:
every note pending, as in vault_bench.py).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from background import kg_env, settle  # noqa: E402
from gen_vault import generate  # noqa: E402
from tree_memory import TreeMemory  # noqa: E402

from vault_kg.jobs.model_worker import running as model_worker  # noqa: E402

KG = [sys.executable, "-c", "from vault_kg.cli.entry import main; main()"]


def build(vault: Path, env: dict[str, str]) -> dict[str, float]:
    """One cold build as a whole process: wall, CPU, own peak RSS, tree peaks; graph.json digest."""
    shutil.rmtree(vault / "kg-out", ignore_errors=True)
    started = time.perf_counter()
    proc = subprocess.Popen(
        [*KG, "build", "--vault", str(vault)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=vault.parent
    )  # not this checkout: `-c` puts the cwd first on sys.path
    tree = TreeMemory(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    tree.stop()
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"kg build failed: {err.strip()}")
    settle(vault / "kg-out")
    while model_worker(vault / "kg-out"):  # with the model pass on, the worker the build woke finds no server
        time.sleep(0.1)
    digest = hashlib.sha256((vault / "kg-out" / "graph.json").read_bytes()).hexdigest()[:16]
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024, "tree_rss": tree.rss_mb, "tree_pss": tree.pss_mb, "digest": int(digest, 16)}


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkout", action="append", default=[], metavar="NAME=DIR", help="another source tree to build with (PYTHONPATH=DIR)")
    parser.add_argument("--model-pass", action="store_true", help="leave the model pass on (a new user's default) with no server: every note pending")
    parser.add_argument("--vault", type=Path, default=None, help="build a copy of this vault (its kg-out/ left out) instead of a generated one")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kg-cold-"))
    vault = work / "vault"
    if args.vault:
        shutil.copytree(args.vault, vault, ignore=shutil.ignore_patterns("kg-out"))
        paths = sorted(vault.rglob("*.md"))
        print(f"vault: a copy of {args.vault} ({len(paths)} notes, {sum(p.stat().st_size for p in paths) / 1e6:.1f} MB of markdown)")
    else:
        paths = generate(vault, args.notes, seed=7)
        print(f"vault: {len(paths)} notes, {sum(p.stat().st_size for p in paths) / 1e6:.1f} MB")
    print(f"{args.rounds} rounds, variants alternated")
    base = kg_env(KG_OLLAMA="off", KG_HTML="off", KG_CONFIG=str(work / "config.toml"))
    base.pop("KG_VAULT", None)
    if args.model_pass:  # the pass on, its server at a port nothing listens on
        base.pop("KG_OLLAMA")
        base["OLLAMA_HOST"] = f"http://127.0.0.1:{free_port()}"
    print(f"model pass: {'on, no server running (every note pending)' if args.model_pass else 'off (KG_OLLAMA=off)'}; KG_NAMES={os.environ.get('KG_NAMES', 'off')}")
    variants = {"this checkout": base, "this checkout, KG_EXTRACT_WORKERS=1": {**base, "KG_EXTRACT_WORKERS": "1"}}
    for item in args.checkout:
        name, _, path = item.partition("=")
        variants[name] = {**base, "PYTHONPATH": str(Path(path).resolve())}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    loads = []
    for _ in range(args.rounds):
        for name, env in variants.items():
            loads.append(os.getloadavg()[0])
            runs[name].append(build(vault, env))
    print(f"load average during the rounds: {min(loads):.1f} to {max(loads):.1f} (2 cores: above 2 the builds share the CPU)")
    print(f"{'variant':<42}{'wall s':>8}{'CPU s':>8}{'own RSS':>9}{'tree RSS':>10}{'tree PSS':>10}")
    for name, rows in runs.items():
        med = {key: statistics.median(r[key] for r in rows) for key in ("wall", "cpu")}
        peak = {key: max(r[key] for r in rows) for key in ("rss", "tree_rss", "tree_pss")}
        print(f"{name:<42}{med['wall']:>8.2f}{med['cpu']:>8.2f}{peak['rss']:>6.0f} MB{peak['tree_rss']:>7.0f} MB{peak['tree_pss']:>7.0f} MB")
    digests = {r["digest"] for rows in runs.values() for r in rows}
    print(f"graph.json identical across variants and rounds: {'yes' if len(digests) == 1 else 'NO'}")
    print("(wall and CPU: medians; RSS and PSS: the highest of the rounds)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    from figures import record

    with record("cold_build" + (f"_{Path(sys.argv[sys.argv.index('--vault') + 1]).name}" if "--vault" in sys.argv else "")):
        main()
