"""What the PreToolUse guardrails hook costs the agent on each Write/Edit, run as Claude Code runs it.

Every row runs the hooks.json PreToolUse command in a fresh shell (`/bin/sh -c COMMAND`, kg found
through KG_BIN) with a real payload: a code file (the no-op path: nothing but the payload is
read), a markdown file outside the vault and the projects (the config is read), an edit of a
vault note that is allowed (the note is parsed before and after), and a note written into a
project (denied). Python's own start-up and the existing PostToolUse hook's no-op path are the
references. Prints the median and p90 of each,
and checks each answer (silent, or a deny).

Usage: python bench/guardrails_bench.py [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMAND = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
NOTE = "---\nsummary: How the payments service retries webhooks.\ntags: [topic/payments, scope/payments]\n---\n# Retries\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kg-guard-bench-") as tmp:
        work = Path(tmp)
        vault, project = work / "vault", work / "payments"
        shutil.copytree(REPO / "examples" / "vault", vault)
        project.mkdir()
        (project / ".git").mkdir()
        config = work / "config.toml"
        config.write_text(f'vault = "{vault}"\n[projects.payments]\npath = "{project}"\n', encoding="utf-8")
        kg = work / "tools" / "kg"
        kg.parent.mkdir()
        kg.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from vault_kg.cli.entry import main; main()" "$@"\n')
        kg.chmod(0o755)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "CLAUDE_"))}
        env.update({"KG_CONFIG": str(config), "KG_OLLAMA": "off", "KG_BIN": str(kg), "CLAUDE_PLUGIN_ROOT": str(REPO)})
        hook = COMMAND.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO))
        acme = vault / "clients" / "Acme Corp.md"

        def payload(tool: str, tool_input: dict[str, object]) -> str:
            return json.dumps({"session_id": "bench", "cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_bench"})

        rows = [
            ("python start-up (reference)", f'"{sys.executable}" -c pass', "", None),
            ("PostToolUse no-op (for comparison)", hook.replace("pre-tool-use", "post-tool-use"), payload("Write", {"file_path": str(work / "app.py")}), False),
            ("Write app.py (no-op)", hook, payload("Write", {"file_path": str(project / "app.py"), "content": "X = 1\n"}), False),
            ("Write ~/notes.md (outside)", hook, payload("Write", {"file_path": str(work / "notes.md"), "content": NOTE}), False),
            ("Edit a vault note (allowed)", hook, payload("Edit", {"file_path": str(acme), "old_string": "topic/payments", "new_string": "topic/billing", "replace_all": False}), False),
            ("Write a note into the project (denied)", hook, payload("Write", {"file_path": str(project / "docs" / "retries.md"), "content": NOTE}), True),
        ]
        print(f"{'PreToolUse guardrails hook':<40}{'median':>10}{'p90':>10}   ({args.runs} runs, /bin/sh -c, kg through KG_BIN)")
        for name, command, data, denies in rows:
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                done = subprocess.run(["/bin/sh", "-c", command], input=data, env=env, capture_output=True, text=True, timeout=60)
                times.append(time.perf_counter() - start)
                if denies is not None and (done.returncode != 0 or done.stderr or ('"deny"' in done.stdout) != denies or (not denies and done.stdout)):
                    raise SystemExit(f"{name}: unexpected answer (exit {done.returncode}): {done.stdout.strip()} {done.stderr.strip()}")
            p90 = statistics.quantiles(times, n=10)[-1]
            print(f"{name:<40}{statistics.median(times) * 1000:>8.1f}ms{p90 * 1000:>8.1f}ms")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("guardrails_bench"):
        main()
