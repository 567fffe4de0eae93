"""The plugin's own install of kg, timed and weighed, and `kg doctor` on a healthy and a broken setup.

A clean copy of the repository (what Claude Code copies into its plugin cache: no .venv, no
.git) stands as the plugin folder; a fresh HOME has no `kg` anywhere. The session-start hook is
run exactly as hooks.json states it, with the variables Claude Code sets (CLAUDE_PLUGIN_ROOT,
CLAUDE_PLUGIN_DATA); the bench prints its one line, then waits for the install the launcher
started in the background and prints how long it took (pip's cache as this machine has it: the
time is the install, not the download, once the cache is warm) and what it weighs. Then, through
the launcher: the example vault is built and `kg doctor` runs on it (healthy), then on a broken
setup (the vault's graph removed, the model pass on with nothing listening, a hook failure in
hooks.log), and the hook line a broken install gives.

Usage: python bench/provision_bench.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from background import processes_mentioning, stop_processes_mentioning  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SKIP = shutil.ignore_patterns(".git", ".venv", "kg-out", "__pycache__", "*.egg-info", ".pytest_cache", "node_modules", "build")
HOOK = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]


def du(path: Path) -> tuple[int, int]:
    size = files = 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            size += p.stat().st_size
            files += 1
    return size, files


def session_start(plugin: Path, env: dict[str, str], cwd: Path) -> str:
    payload = json.dumps({"session_id": "bench", "cwd": str(cwd), "hook_event_name": "SessionStart", "source": "startup"})
    done = subprocess.run(["/bin/sh", "-c", HOOK.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))], input=payload, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    return done.stdout.strip()


def settle(work: Path, timeout: float = 600) -> None:
    """Wait for kg's background jobs to finish (they write into the vault's kg-out), then stop any left."""
    deadline = time.monotonic() + timeout
    while processes_mentioning(str(work)) and time.monotonic() < deadline:
        time.sleep(0.5)
    stop_processes_mentioning(str(work))


def doctor(launcher: Path, env: dict[str, str], cwd: Path) -> None:
    done = subprocess.run([str(launcher), "doctor"], env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    print(done.stdout.rstrip())
    print(f"(exit {done.returncode})")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="kg-provision-bench-") as tmp:
        work = Path(tmp)
        plugin = work / "plugin"
        shutil.copytree(REPO, plugin, ignore=SKIP, symlinks=True)
        vault = work / "vault"
        shutil.copytree(REPO / "examples" / "vault", vault, ignore=SKIP)
        home, data = work / "home", work / "home" / ".claude" / "plugins" / "data" / "vault-kg-vault-kg"
        home.mkdir()
        path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "kg").exists())
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "CLAUDE_", "PIPX_", "UV_", "XDG_", "VIRTUAL_ENV"))}
        env.update({"HOME": str(home), "PATH": path, "KG_OLLAMA": "off", "CLAUDE_PLUGIN_ROOT": str(plugin), "CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_PLUGIN_OPTION_VAULT": str(vault)})
        env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
        began = time.monotonic()
        first = session_start(plugin, env, vault)
        returned = time.monotonic() - began
        print(f"first session start ({returned:.2f}s): {first}")
        while (data / "provisioning.pid").exists():
            time.sleep(1)
        took = time.monotonic() - began
        if not (data / "current").exists():
            raise SystemExit((data / "provision.log").read_text()[-3000:])
        size, files = du((data / "current").resolve())
        print(f"installed in {took:.0f}s (pip, {'uv' if shutil.which('uv') else 'no uv'} on PATH); the environment: {size / 1024 / 1024:.0f} MB in {files} files")
        launcher = plugin / "bin" / "kg-launch"
        built = subprocess.run([str(launcher), "build", "--vault", str(vault)], env=env, capture_output=True, text=True, timeout=600)
        assert built.returncode == 0, built.stderr
        settle(work)  # the build's background jobs write into kg-out, which the broken case removes
        print("\n$ kg-launch doctor   (healthy: the example vault built, the model pass off)")
        doctor(launcher, env, vault)
        shutil.rmtree(vault / "kg-out")
        (vault / "kg-out").mkdir()
        (vault / "kg-out" / "hooks.log").write_text(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} post-tool-use: OSError: [Errno 28] No space left on device\n")
        broken = {**env, "KG_OLLAMA": "on", "OLLAMA_HOST": "http://127.0.0.1:9"}
        print("\n$ kg-launch doctor   (broken: the graph removed, the model pass on with no Ollama, a hook failure today)")
        doctor(launcher, broken, vault)
        python = (data / "current" / "bin" / "python").resolve()
        (data / "current" / "bin" / "python").unlink()
        print(f"\nsession start with the installed environment's python removed ({python.name} gone):")
        print(session_start(plugin, env, vault))
        settle(work, timeout=60)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("provision_bench"):
        main()
