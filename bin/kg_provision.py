"""Install kg for the Claude Code plugin, from the plugin's own source, into a folder that outlives it.

`bin/kg-launch` runs this (detached, in the background) when it finds no `kg`, and again when the
plugin was upgraded to another kg version. It needs only the standard library and a Python 3.11+
on the machine: with `uv` on PATH it makes the environment with `uv venv` + `uv pip install`, else
with `python3 -m venv` + pip. The environment lives in the data folder Claude Code gives the plugin
(`$CLAUDE_PLUGIN_DATA`, which survives upgrades), else in `$XDG_DATA_HOME/kg-vault`; nothing is
written into the plugin folder, so no `.venv` is ever copied with it.

Each install goes into a new `envs/<n>` folder and `current` is switched to it only once its `kg
--version` answers; the environment in use keeps working until then, and the one before it is
removed by the next install. One install at a time (`provision.lock`); `provisioning.pid` tells the
launcher one runs; a failure leaves `provision.failed`: one line saying what went wrong and what
to run. Usage: kg_provision.py --root PLUGIN_ROOT --data DATA_FOLDER [--background]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["Folder", "find_python", "install", "main", "plugin_version"]

MIN_PYTHON = (3, 11)
PYTHONS = ("python3.13", "python3.12", "python3.11", "python3")
SOURCE_PARTS = ("pyproject.toml", "README.md", "vault_kg", "extract", "graph_out", "episodic", "hooks")
LOG_MAX_BYTES = 2_000_000


class Folder:
    """The files of one data folder, spelled once (bin/kg-launch reads the same names)."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.envs = data / "envs"
        self.current = data / "current"
        self.stamp = data / "source"  # line 1: the plugin folder installed from; line 2: its kg version
        self.log = data / "provision.log"
        self.failed = data / "provision.failed"
        self.pid = data / "provisioning.pid"
        self.lock = data / "provision.lock"

    def kg(self) -> Path:
        return self.current / "bin" / "kg"


class ProvisionError(Exception):
    """One line: what went wrong (the log has the rest)."""


def plugin_version(root: Path) -> str:
    """The kg version the plugin's source declares (`vault_kg/__init__.py`)."""
    text = (root / "vault_kg" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if not found:
        raise ProvisionError(f"{root / 'vault_kg' / '__init__.py'} names no __version__; reinstall the plugin")
    return found.group(1)


def find_python() -> str:
    """The first Python on PATH that is 3.11 or newer."""
    seen = []
    for name in PYTHONS:
        path = shutil.which(name)
        if not path or path in seen:
            continue
        seen.append(path)
        done = subprocess.run([path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True, timeout=30)
        if done.returncode == 0 and tuple(int(x) for x in done.stdout.split(".")) >= MIN_PYTHON:
            return path
    found = ", ".join(seen) or "no python3 on PATH"
    raise ProvisionError(f"kg needs Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer ({found}); install it (e.g. `apt install python3.11`, `brew install python@3.12`)")


def _run(argv: list[str], log, cwd: Path | None = None) -> None:
    """Run one step, its output into the log; a failure raises with the step's last line."""
    log.write(f"$ {' '.join(argv)}\n")
    log.flush()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd, stdin=subprocess.DEVNULL)
    log.write(done.stdout)
    log.flush()
    if done.returncode != 0:
        lines = [line.strip() for line in done.stdout.splitlines() if line.strip() and not line.startswith("WARNING: Location")]
        last = lines[-1] if lines else f"exit {done.returncode}"
        raise ProvisionError(f"`{Path(argv[0]).name} {' '.join(argv[1:3])}` failed: {last[:300]}")


def _copy_source(root: Path, into: Path) -> Path:
    """The package source alone, so building it writes nothing into the plugin folder."""
    source = into / "kg-vault"
    for part in SOURCE_PARTS:
        src = root / part
        if src.is_dir():
            shutil.copytree(src, source / part, ignore=shutil.ignore_patterns("__pycache__", "kg-out", "*.egg-info"))
        elif src.is_file():
            source.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, source / part)
        else:
            raise ProvisionError(f"{src} is missing from the plugin; reinstall it (claude plugin install vault-kg@vault-kg)")
    return source


def _make_env(env: Path, source: Path, log) -> None:
    uv = shutil.which("uv")
    if uv:
        _run([uv, "venv", "--quiet", "--python", find_python(), str(env)], log)
        _run([uv, "pip", "install", "--quiet", "--python", str(env / "bin" / "python"), str(source)], log)
        return
    _run([find_python(), "-m", "venv", str(env)], log)
    # --no-compile, as uv does by default: byte-compiling ~24,000 files is ~40% of the install, and
    # Python compiles what kg imports on first use (the environment is the user's, so writable).
    _run([str(env / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off", "--no-compile", str(source)], log)


def _check(env: Path, version: str, log) -> None:
    kg = env / "bin" / "kg"
    done = subprocess.run([str(kg), "--version"], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    log.write(f"$ {kg} --version\n{done.stdout}{done.stderr}")
    if done.returncode != 0 or done.stdout.strip() != f"kg {version}":
        raise ProvisionError(f"the new kg does not start ({(done.stderr or done.stdout).strip().splitlines()[-1:] or done.returncode})")


def _switch(folder: Folder, env: Path, root: Path, version: str) -> None:
    """Point `current` at the new environment in one rename, then say which source it came from."""
    previous = folder.current.resolve() if folder.current.is_symlink() else None
    link = folder.data / f".current.{os.getpid()}"
    if link.is_symlink():
        link.unlink()
    link.symlink_to(env.relative_to(folder.data))
    os.replace(link, folder.current)
    tmp = folder.data / f".source.{os.getpid()}"
    tmp.write_text(f"{root}\n{version}\n", encoding="utf-8")
    os.replace(tmp, folder.stamp)
    for old in sorted(folder.envs.iterdir()):  # keep the new one and the one a running server may still use
        if old != env and old.resolve() != previous:
            shutil.rmtree(old, ignore_errors=True)


def install(root: Path, folder: Folder, log) -> Path:
    """Make a new environment with kg from `root`, check it starts, and make it current."""
    version = plugin_version(root)
    folder.envs.mkdir(parents=True, exist_ok=True)
    for left in folder.data.glob("kg-source-*"):  # a killed install's copy (we hold the lock: none is in use)
        shutil.rmtree(left, ignore_errors=True)
    env = folder.envs / f"{version}-{int(time.time())}"
    with tempfile.TemporaryDirectory(prefix="kg-source-", dir=folder.data) as tmp:
        source = _copy_source(root, Path(tmp))
        try:
            _make_env(env, source, log)
            _check(env, version, log)
        except BaseException:
            shutil.rmtree(env, ignore_errors=True)
            raise
    _switch(folder, env, root, version)
    return env


def _failure_line(message: str, root: Path, folder: Folder) -> str:
    return f"vault-kg: installing kg failed: {message}; fix that, then run: '{root}/bin/kg-launch' --provision (log: {folder.log})"


def _locked(folder: Folder):
    """The provision lock, or None when another install holds it."""
    import fcntl

    handle = open(folder.lock, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def _open_log(folder: Folder):
    if folder.log.exists() and folder.log.stat().st_size > LOG_MAX_BYTES:
        os.replace(folder.log, folder.log.with_suffix(".log.1"))
    return open(folder.log, "a", encoding="utf-8")


def provision(root: Path, folder: Folder, echo: bool = False) -> int:
    """One install under the lock; 0 when kg is installed (or another install is running)."""
    folder.data.mkdir(parents=True, exist_ok=True)
    lock = _locked(folder)
    if lock is None:
        print("vault-kg: another install of kg is running (log: %s)" % folder.log, file=sys.stderr)
        return 0
    with lock, _open_log(folder) as log:
        folder.pid.write_text(f"{os.getpid()}\n", encoding="utf-8")
        folder.failed.unlink(missing_ok=True)
        log.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} installing kg from {root}\n")
        began = time.monotonic()
        try:
            env = install(root, folder, log)
        except (ProvisionError, OSError, subprocess.SubprocessError) as exc:
            line = _failure_line(str(exc), root, folder)
            folder.failed.write_text(f"{root}\n{line}\n", encoding="utf-8")
            log.write(f"{line}\n")
            print(line, file=sys.stderr)
            return 1
        finally:
            folder.pid.unlink(missing_ok=True)
        log.write(f"--- installed {env} in {time.monotonic() - began:.0f}s\n")
        if echo:
            print(f"vault-kg: kg installed in {env} ({time.monotonic() - began:.0f}s)")
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install kg for the vault-kg Claude Code plugin.")
    parser.add_argument("--root", type=Path, required=True, help="the plugin folder (its source)")
    parser.add_argument("--data", type=Path, required=True, help="the folder that keeps the environment")
    parser.add_argument("--background", action="store_true", help="detach from the hook that started it")
    args = parser.parse_args(argv)
    if args.background:
        try:
            os.setsid()  # a hook's timeout or the session's end must not take the install with it
        except OSError:
            pass  # already a session leader
    return provision(args.root.resolve(), Folder(args.data), echo=not args.background)


if __name__ == "__main__":
    sys.exit(main())
