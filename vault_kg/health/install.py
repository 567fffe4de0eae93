"""The doctor's install lines: this kg, and the kg the Claude Code plugin's launcher would start.

The plugin is found the way Claude Code runs it: `$CLAUDE_PLUGIN_ROOT` inside a hook or the MCP
server, else the install Claude Code recorded in `~/.claude/plugins/installed_plugins.json`. Its
launcher answers `--which` (the kg it would start, how it found it, its data folder) without
starting anything.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from vault_kg import __version__
from vault_kg.core.safe_read import read_text
from vault_kg.health.report import Report

__all__ = ["PLUGIN_ID", "check_install", "claude_dir", "plugin_root"]

PLUGIN_ID = "vault-kg@vault-kg"


CONFIG_BYTES = 4 * 1024 * 1024  # a settings or version file larger than this is not one Claude Code or kg wrote


def claude_dir() -> Path:
    """Claude Code's own folder (`$CLAUDE_CONFIG_DIR`, else ~/.claude)."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def plugin_root() -> Path | None:
    """The folder of the plugin Claude Code runs, if it is installed."""
    if os.environ.get("CLAUDE_PLUGIN_ROOT"):
        return Path(os.environ["CLAUDE_PLUGIN_ROOT"])
    try:
        installed = json.loads(read_text(claude_dir() / "plugins" / "installed_plugins.json", CONFIG_BYTES))
        entries = installed.get("plugins", {}).get(PLUGIN_ID) or []
        paths = [Path(e["installPath"]) for e in entries if isinstance(e, dict) and e.get("installPath")]
    except (OSError, ValueError, AttributeError):
        return None
    return next((p for p in paths if (p / "bin" / "kg-launch").is_file()), None)


def _which(launcher: Path) -> list[str]:
    done = subprocess.run([str(launcher), "--which"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    return (done.stdout.strip().split("\t") + ["", "", ""])[:3]


def _version_of(kg: str) -> str:
    done = subprocess.run([kg, "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return done.stdout.strip().removeprefix("kg ") if done.returncode == 0 else f"broken (exit {done.returncode})"


def _failed_line(data: str) -> str:
    try:
        return read_text(Path(data) / "provision.failed", CONFIG_BYTES).splitlines()[1]
    except (OSError, IndexError):
        return "the last install failed"


def check_install(report: Report) -> None:
    """`kg` itself, then where the plugin's launcher finds kg (and whether that kg starts)."""
    report.add("kg", "ok", f"kg {__version__} (Python {sys.version.split()[0]}, {sys.prefix})")
    root = plugin_root()
    if root is None:
        report.add("launcher", "off", f"the Claude Code plugin is not installed (claude plugin install {PLUGIN_ID})")
        return
    launcher = root / "bin" / "kg-launch"
    kg, how, data = _which(launcher)
    repair = f"'{launcher}' --provision"
    if kg == "none":
        if how == "installing":
            report.add("launcher", "warn", f"{launcher}: installing kg in the background (log: {Path(data) / 'provision.log'})", "wait a minute, then start a new session")
        elif how == "failed":
            report.add("launcher", "fail", f"{launcher}: {_failed_line(data)}", repair)
        else:
            report.add("launcher", "fail", f"{launcher} finds no kg", repair)
        return
    version = _version_of(kg)
    where = f"{launcher} starts {kg} ({how}; data folder {data})"
    wanted = _plugin_version(root) or __version__
    if version != wanted:
        fix = repair if how == "plugin" else "upgrade that kg the way you installed it (pipx upgrade kg-vault, ...), or set KG_BIN to the kg you mean"
        report.add("launcher", "fail" if version.startswith("broken") else "warn", f"{where}: kg {version}, the plugin is {wanted}", fix)
        return
    report.add("launcher", "ok", f"{where}: kg {version}")


def _plugin_version(root: Path) -> str | None:
    """The kg version the plugin's own source declares (what its launcher would install)."""
    try:
        found = re.search(r'^__version__ = "([^"]+)"', read_text(root / "vault_kg" / "__init__.py", CONFIG_BYTES), re.M)
    except OSError:
        return None
    return found.group(1) if found else None
