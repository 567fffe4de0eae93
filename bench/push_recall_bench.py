"""What push-recall (the UserPromptSubmit hook) costs the agent on each prompt, run as Claude Code runs it.

Builds the 10,000-note bench vault (bench/gen_vault.py) once, then runs the hooks.json
UserPromptSubmit command in a fresh shell (`/bin/sh -c COMMAND`, kg found through KG_BIN) with a
real payload, a new session per run so dedup never hides the work: a prompt outside any vault
(the baseline: the config is read, nothing else), an unrelated prompt (searched, silent), a prompt
naming a note's title and summary words (searched, one note injected), and a prompt naming a file
(the anchored-file scan runs too). Python's own start-up is the reference. Prints the median and
p90 of each, and checks each answer (silent, or one note); then the decision alone, in-process.

Usage: python bench/push_recall_bench.py [--notes 10000] [--runs 30] [--vault DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMAND = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]


def kg_cmd(*args: str, env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-c", "from vault_kg.cli.entry import main; main()", *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"kg {' '.join(args)} failed: {done.stderr.strip()}")


def strong_prompt(vault: Path) -> str:
    """A prompt naming a real note: its title and the first words of its summary."""
    note = sorted(p for p in vault.rglob("*.md") if "kg-out" not in p.parts)[len(list(vault.rglob("*.md"))) // 2]
    summary = next(line for line in note.read_text().splitlines() if line.startswith("summary:"))
    return f"{note.stem}: {' '.join(summary.split()[1:6])}, can you check it?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--vault", type=Path, help="reuse a vault generated and built before (kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kg-push-bench-") as tmp:
        work = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "CLAUDE_"))}
        env.update({"KG_OLLAMA": "off", "KG_HTML": "off", "CLAUDE_PLUGIN_ROOT": str(REPO)})
        vault = args.vault or work / "vault"
        config = work / "config.toml"
        config.write_text(f'vault = "{vault}"\n', encoding="utf-8")
        env["KG_CONFIG"] = str(config)
        if args.vault is None:
            subprocess.run([sys.executable, str(REPO / "bench" / "gen_vault.py"), str(vault), "--notes", str(args.notes)], check=True, capture_output=True)
            started = time.perf_counter()
            kg_cmd("build", "--vault", str(vault), env=env)
            print(f"built the {args.notes}-note vault in {time.perf_counter() - started:.0f}s")
        outside = work / "outside.toml"
        outside.write_text("", encoding="utf-8")
        elsewhere = work / "elsewhere"
        elsewhere.mkdir()
        kg = work / "tools" / "kg"
        kg.parent.mkdir()
        kg.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from vault_kg.cli.entry import main; main()" "$@"\n')
        kg.chmod(0o755)
        env["KG_BIN"] = str(kg)
        hook = COMMAND.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO))
        strong = strong_prompt(vault)

        def payload(prompt: str, run: int, cwd: Path) -> str:
            return json.dumps(
                {
                    "session_id": f"bench-{run}-{time.time_ns()}",
                    "transcript_path": str(work / "t.jsonl"),
                    "cwd": str(cwd),
                    "permission_mode": "default",
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": prompt,
                }
            )

        rows = [
            ("python start-up (reference)", f'"{sys.executable}" -c pass', None, None, {}),
            ("outside any vault (baseline)", hook, "fix the flaky retry test", False, {"KG_CONFIG": str(outside)}),
            ("unrelated prompt (silent)", hook, "please bump the version and tag a release", False, {}),
            ("matching prompt (one note)", hook, strong, True, {}),
            ("prompt naming a file (scan)", hook, "what does src/payments/retry.py do", None, {}),
        ]
        print(f"{'UserPromptSubmit push-recall hook':<36}{'median':>10}{'p90':>10}   ({args.runs} runs, /bin/sh -c, kg through KG_BIN)")
        print(f"  matching prompt: {strong!r}")
        for name, command, prompt, injects, extra in rows:
            times = []
            for run in range(args.runs):
                data = payload(prompt, run, elsewhere if extra else vault) if prompt else ""
                start = time.perf_counter()
                done = subprocess.run(["/bin/sh", "-c", command], input=data, env={**env, **extra}, capture_output=True, text=True, timeout=60)
                times.append(time.perf_counter() - start)
                if prompt is not None and (done.returncode != 0 or done.stderr):
                    raise SystemExit(f"{name}: exit {done.returncode}: {done.stderr.strip()}")
                if injects is not None and bool(done.stdout.strip()) != injects:
                    raise SystemExit(f"{name}: expected {'one note' if injects else 'silence'}, got {done.stdout.strip()!r}")
            p90 = statistics.quantiles(times, n=10)[-1]
            print(f"{name:<36}{statistics.median(times) * 1000:>8.1f}ms{p90 * 1000:>8.1f}ms")
        in_process(vault, config, strong, args.runs)


def in_process(vault: Path, config: Path, strong: str, runs: int) -> None:
    """The decision alone (FTS5 search, strength, session state), without Python's start-up."""
    os.environ["KG_CONFIG"] = str(config)
    from vault_kg.core.config import load_config
    from vault_kg.memory.push_recall import recall_for_prompt

    cfg = load_config()
    print(f"{'in-process recall_for_prompt':<36}{'median':>10}{'p90':>10}")
    for name, prompt in (("unrelated prompt", "please bump the version and tag a release"), ("matching prompt", strong), ("prompt naming a file", "what does src/payments/retry.py do")):
        times = []
        for run in range(runs):
            start = time.perf_counter()
            recall_for_prompt(vault, cfg, prompt, f"inproc-{run}-{time.time_ns()}")
            times.append(time.perf_counter() - start)
        p90 = statistics.quantiles(times, n=10)[-1]
        print(f"  {name:<34}{statistics.median(times) * 1000:>8.1f}ms{p90 * 1000:>8.1f}ms")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("push_recall_bench"):
        main()
