"""What the plugin launcher adds to a hook: the no-op PostToolUse hook, direct and through bin/kg-launch.

A no-op hook (an edit outside the vault and the projects) is the cost the agent pays on every
edit; it must stay well under 100 ms. Each row runs that hook as Claude Code does, a fresh shell
per call (`/bin/sh -c COMMAND`), with a PATH that holds no `kg`: `kg` itself (the reference),
the hooks.json command finding kg through KG_BIN, the kg the plugin installed in its data folder
(the last place it looks), and with no kg at all (`KG_PROVISION=off`: the one-line answer). Prints the median and p90 of each.

Usage: python bench/launcher_bench.py [--runs 30]
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
COMMAND = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]["PostToolUse"][0]["hooks"][0]["command"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kg-launch-bench-") as tmp:
        work = Path(tmp)
        plugin = work / "plugin"
        data = work / "plugin data"
        for part in ("bin", "hooks", ".claude-plugin"):
            shutil.copytree(REPO / part, plugin / part)
        kg = work / "tools" / "kg"
        kg.parent.mkdir()
        kg.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from vault_kg.cli.entry import main; main()" "$@"\n')
        kg.chmod(0o755)
        elsewhere = work / "elsewhere.txt"
        elsewhere.write_text("not a note\n")
        payload = json.dumps({"session_id": "bench", "cwd": str(work), "hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {"file_path": str(elsewhere)}})
        path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "kg").exists())
        base = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "CLAUDE_"))}
        base.update({"PATH": path, "HOME": str(work / "home"), "KG_CONFIG": str(work / "config.toml"), "KG_OLLAMA": "off", "CLAUDE_PLUGIN_ROOT": str(plugin), "CLAUDE_PLUGIN_DATA": str(data)})
        hook = COMMAND.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))
        own_kg = data / "envs" / "1" / "bin" / "kg"

        def use_own() -> None:
            """What bin/kg_provision.py leaves: an environment, `current` pointing at it, its source."""
            own_kg.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(kg, own_kg)
            (data / "current").symlink_to(data / "envs" / "1")
            (data / "source").write_text(f"{plugin}\n{json.loads((REPO / '.claude-plugin' / 'plugin.json').read_text())['version']}\n")

        def no_kg() -> None:
            shutil.rmtree(data, ignore_errors=True)

        rows = [
            ("python start-up (reference)", f'"{sys.executable}" -c pass', {}, None),
            ("kg hook post-tool-use (direct)", f'"{kg}" hook post-tool-use', {}, None),
            ("hooks.json command, KG_BIN", hook, {"KG_BIN": str(kg)}, None),
            ("hooks.json command, plugin's own kg", hook, {}, use_own),
            ("hooks.json command, no kg", hook, {"KG_PROVISION": "off"}, no_kg),
        ]
        print(f"{'no-op PostToolUse hook':<36}{'median':>10}{'p90':>10}   ({args.runs} runs, /bin/sh -c, PATH without kg)")
        for name, command, extra, setup in rows:
            if setup is not None:
                setup()
            env = {**base, **extra}
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                done = subprocess.run(["/bin/sh", "-c", command], input=payload, env=env, capture_output=True, text=True, timeout=60)
                times.append(time.perf_counter() - start)
                if done.returncode != 0 or name.endswith("no kg") != ("not installed" in done.stderr):
                    raise SystemExit(f"{name}: unexpected answer (exit {done.returncode}): {done.stderr.strip()}")
            p90 = statistics.quantiles(times, n=10)[-1]
            print(f"{name:<36}{statistics.median(times) * 1000:>8.1f}ms{p90 * 1000:>8.1f}ms")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("launcher_bench"):
        main()
