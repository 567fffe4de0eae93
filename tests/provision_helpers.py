"""What the plugin's own install of kg leaves behind, read the way bin/kg-launch reads it, and a
tiny stand-in for kg's source (a real package, installed for real by pip, with no dependencies)."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

from conftest import REPO

# flit_core, not setuptools: pip's isolated build installs it in a fraction of the time (CI seconds).
TINY_PYPROJECT = """[build-system]
requires = ["flit_core>=3.4,<4"]
build-backend = "flit_core.buildapi"

[project]
name = "kg-vault"
version = "{version}"
description = "a stand-in for kg"

[project.scripts]
kg = "vault_kg:main"

[tool.flit.module]
name = "vault_kg"
"""

TINY_KG = """__version__ = "{version}"


def main():
    import json, sys
    if sys.argv[1:] == ["--version"]:
        print("kg " + __version__)
    elif sys.argv[1:2] == ["hook"]:
        sys.stdin.read()
        print(json.dumps({{"ran": sys.argv[2], "version": __version__}}))
    else:
        print("kg " + __version__ + " ran " + " ".join(sys.argv[1:]))
"""


def tiny_plugin(root: Path, version: str) -> Path:
    """A plugin folder whose source is a one-module `kg-vault` (installs in seconds, offline but for flit_core)."""
    for part in ("bin", "hooks", ".claude-plugin"):
        shutil.copytree(REPO / part, root / part)
    for empty in ("extract", "graph_out", "episodic"):
        (root / empty).mkdir()
    (root / "vault_kg").mkdir()
    (root / "vault_kg" / "__init__.py").write_text(TINY_KG.format(version=version))
    (root / "pyproject.toml").write_text(TINY_PYPROJECT.format(version=version))
    (root / "README.md").write_text("tiny kg\n")
    return root


def provision_pid(data: Path) -> int | None:
    """The pid of the install running for `data`, if one runs."""
    try:
        pid = int((data / "provisioning.pid").read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def wait_provisioned(data: Path, timeout: float) -> bool:
    """Wait (with a deadline) until no install runs for `data`; True when one has finished well."""
    deadline = time.monotonic() + timeout
    time.sleep(0.2)
    while provision_pid(data) is not None and time.monotonic() < deadline:
        time.sleep(0.5)
    return provision_pid(data) is None and (data / "source").is_file() and not (data / "provision.failed").exists()


def stop_provision(data: Path) -> None:
    """End an install a test started (its own session: the launcher detached it)."""
    pid = provision_pid(data)
    if pid is not None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
