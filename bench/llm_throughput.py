"""What the model pass costs, counted at a loopback stand-in for Ollama: calls, prompt tokens,
`num_ctx` values, and the calls an unchanged vault or a tags-only edit costs.

    python bench/llm_throughput.py [--notes 1000] [--code OLD_CHECKOUT] [--delay 0.01]

Model state: running stand-in. The stand-in is `tests/ollama_fake.py` started as its own process
(one chat at a time, `--delay` seconds each, every request logged; it answers each note with the
capitalized words of its lines as entities and relations). For each vault (`examples/vault`, and
a generated vault of `--notes` documentation-like notes of realistic length: about 3,200
characters of prose, one in twenty over 9,000) it runs whole `kg` processes: `kg build` until the
model pass is done (`--wait`; the old code calls the model inside the build), a no-op `kg update`,
then a tags-only edit of 5 notes and `kg update` of each. `--code DIR` runs the same against
another checkout (e.g. `git archive d336109 | tar -x -C /tmp/kg-old`), and prints both.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_vault import generate  # noqa: E402


def start_standin(log: Path, delay: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "ollama_fake.py"), "--delay", str(delay), "--log", str(log)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().split()[-1]
    return proc, url


def chats(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [r for r in (json.loads(line) for line in log.read_text().splitlines()) if r["path"] == "/api/chat"]


def requests(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def kg(code: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    full = {**env, "PYTHONPATH": str(code)}
    done = subprocess.run([sys.executable, "-c", "from vault_kg.cli.entry import main; main()", *args], env=full, capture_output=True, text=True, cwd=str(code))
    if done.returncode != 0:
        raise SystemExit(f"kg {' '.join(args)} failed ({code}): {done.stderr.strip()[-800:]}")
    return done


def settle(out: Path, timeout: float = 3600) -> None:
    """Until no model worker holds the vault (the new code's background pass)."""
    sys.path.insert(0, str(ROOT))
    from vault_kg.jobs.model_worker import running

    time.sleep(0.5)
    deadline = time.monotonic() + timeout
    while running(out) and time.monotonic() < deadline:
        time.sleep(0.2)


def measure(code: Path, source: Path, work: Path, delay: float, new: bool) -> dict[str, float]:
    vault = work / "vault"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, vault)
    log = work / "requests.jsonl"
    proc, url = start_standin(log, delay)
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("KG_VAULT", "KG_MODEL", "PYTHONDONTWRITEBYTECODE")}
        env.update(KG_CONFIG=str(work / "config.toml"), KG_OLLAMA="on", OLLAMA_HOST=url, KG_HTML="off")
        notes = sorted(p for p in vault.rglob("*.md") if "kg-out" not in p.parts)
        started = time.perf_counter()
        kg(code, env, "build", "--vault", str(vault), *(["--wait"] if new else []))
        settle(vault / "kg-out")
        build_s = time.perf_counter() - started
        built = chats(log)
        before = requests(log)
        kg(code, env, "update", "--vault", str(vault))
        settle(vault / "kg-out")
        noop_requests = requests(log) - before
        before_chats = len(chats(log))
        edited = [p for p in notes if p.read_text().startswith("---\n")][:5]
        for note in edited:
            note.write_text(note.read_text().replace("tags:\n", "tags:\n  - topic/edited\n", 1))
            kg(code, env, "update", str(note), "--vault", str(vault))
            settle(vault / "kg-out")
        tags_calls = len(chats(log)) - before_chats
    finally:
        proc.terminate()
        proc.wait(10)
    return {
        "notes": len(notes),
        "calls": len(built),
        "calls_per_note": len(built) / len(notes),
        "prompt_tokens_per_note": sum(r.get("prompt_tokens", 0) for r in built) / len(notes),
        "num_ctx_values": sorted({r.get("num_ctx") for r in built}),
        "noop_requests": noop_requests,
        "tags_only_calls": tags_calls,
        "tags_only_edits": len(edited),
        "build_s": build_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--code", type=Path, help="another checkout to measure the same way (today's code)")
    parser.add_argument("--delay", type=float, default=0.01, help="seconds per call at the stand-in")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kg-llm-bench-"))
    try:
        generated = work / "generated"
        generate(generated, args.notes, seed=7, realistic=True)
        vaults = [("examples/vault", ROOT / "examples" / "vault"), (f"generated {args.notes}", generated)]
        codes = [("new", ROOT, True)] + ([("old", args.code.resolve(), False)] if args.code else [])
        print(f"model state: running stand-in (tests/ollama_fake.py as a process, one chat at a time, {args.delay} s per call)")
        print(f"{'vault':<18}{'code':<6}{'notes':>6}{'calls':>7}{'calls/note':>12}{'prompt tok/note':>17}{'num_ctx values':>18}{'no-op reqs':>12}{'tags-only calls':>17}{'build s':>9}")
        for label, source in vaults:
            for name, code, new in codes:
                r = measure(code, source, work / f"{name}-{label.split()[0]}", args.delay, new)
                ctx = ",".join(str(v) for v in r["num_ctx_values"])
                print(
                    f"{label:<18}{name:<6}{r['notes']:>6}{r['calls']:>7}{r['calls_per_note']:>12.2f}{r['prompt_tokens_per_note']:>17.0f}{ctx:>18}"
                    f"{r['noop_requests']:>12}{str(r['tags_only_calls']) + '/' + str(r['tags_only_edits']):>17}{r['build_s']:>9.1f}",
                    flush=True,
                )
        print("prompt tokens as the stand-in counts them (characters / 4, as for English prose); 'no-op reqs' counts requests of any kind")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("llm_throughput"):
        main()
