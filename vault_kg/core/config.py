"""Configuration: where the vault is, how to reach Ollama, which projects are registered.

Precedence, highest first: command-line flags, environment (`KG_VAULT`, `OLLAMA_HOST`,
`KG_MODEL`, `KG_OLLAMA=off`, `KG_GUARDRAILS=off`, `KG_PUSH_RECALL=off`), the working directory (inside a vault or a registered project), the config file
(`$KG_CONFIG`, else `$XDG_CONFIG_HOME/vault-kg/config.toml`, else `~/.config/vault-kg/config.toml`).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

from vault_kg.core.errors import KgError

__all__ = [
    "CONFIG_TEMPLATE",
    "Config",
    "DEFAULT_MODEL",
    "DEFAULT_OLLAMA_HOST",
    "MAX_CONFIG_BYTES",
    "OUT_DIRNAME",
    "config_path",
    "config_text",
    "find_repo_upwards",
    "find_vault",
    "find_vault_upwards",
    "inside",
    "load_config",
    "resolve_vault",
]

DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
DEFAULT_MODEL = "qwen2.5:7b-instruct"
OUT_DIRNAME = "kg-out"
MAX_CONFIG_BYTES = 1024 * 1024

CONFIG_TEMPLATE = """\
# vault-kg configuration. Every key is optional; flags and environment variables win.

# The markdown vault: the single source of truth for knowledge. (env: KG_VAULT, flag: --vault)
vault = "{vault}"

# Time zone used to resolve "yesterday" and "last week" in `kg recall` (IANA name; empty = system).
timezone = ""

[ollama]
# Where Ollama listens (env: OLLAMA_HOST) and which model extracts entities (flag: --model).
host = "{host}"
model = "{model}"
# Set to false to build only the deterministic graph, without calling a model.
enabled = true
# Requests kept in flight by the background worker (match OLLAMA_NUM_PARALLEL on the server).
parallel = 1
# The context window of every call (one value per run: Ollama reloads the model when it changes).
num_ctx = 8192
# Seconds to wait for one call, and the most one note may take before it is retried later.
timeout = 600
note_budget_s = 1800

[session]
# Hard cap on what the session-start hook injects into the agent's context, in characters.
brief_chars = 4000
# Every session start refreshes the graphs in the background (an incremental update); the brief
# says so only when the last refresh is older than this many days.
reconcile_days = 7

[push_recall]
# On each prompt, inject at most one vault note that strongly matches it (see docs/memory.md).
# Set enabled to false to turn it off (env: KG_PUSH_RECALL=off). `floor` is the absolute strength
# (0-1) a match needs; `rise` is how much stronger a note ignored once must match to come back.
enabled = true
floor = 0.6
rise = 0.15

[guardrails]
# Set to false to let agents tag notes scope/global, rewrite past journal days and write
# knowledge notes into project repositories (env: KG_GUARDRAILS=off). See docs/guardrails.md.
enabled = true

# Registered projects (each gets its own code graph). Add with `kg project add PATH`.
[projects]
"""


@dataclass
class Config:
    path: Path
    vault: Path | None = None
    ollama_host: str = DEFAULT_OLLAMA_HOST
    ollama_model: str = DEFAULT_MODEL
    ollama_enabled: bool = True
    ollama_parallel: int = 1
    ollama_num_ctx: int = 8192
    ollama_timeout: float = 600.0
    ollama_note_budget_s: float = 1800.0
    timezone: str = ""
    brief_chars: int = 4000
    reconcile_days: int = 7
    guardrails: bool = True
    push_recall: bool = True
    push_floor: float = 0.6
    push_rise: float = 0.15
    projects: dict[str, Path] = field(default_factory=dict)
    conventions: dict[str, list[str]] = field(default_factory=dict)


def config_path() -> Path:
    explicit = os.environ.get("KG_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "vault-kg" / "config.toml"


def config_text(path: Path) -> str | None:
    """The config file's text (None: there is none), read through the one reader: a FIFO, a device
    or a file over 1 MB is one line, never a hang."""
    from vault_kg.core.safe_read import read_regular

    try:
        data = read_regular(path, MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise KgError(f"{path}: cannot read the config file ({exc.strerror or exc}); fix it or run `kg init --force`") from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise KgError(f"{path}: over {MAX_CONFIG_BYTES // 1024} KB, not a config file; fix it or run `kg init --force`")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KgError(f"{path}: not valid TOML ({exc}); fix it or run `kg init --force`") from exc


def load_config(path: Path | None = None) -> Config:
    """Read the config file (missing is fine: defaults) and apply the environment."""
    path = path or config_path()
    raw: dict[str, Any] = {}
    text = config_text(path)
    if text is not None:
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise KgError(f"{path}: not valid TOML ({exc}); fix it or run `kg init --force`") from exc
    ollama = raw.get("ollama", {}) or {}
    session = raw.get("session", {}) or {}
    guardrails = raw.get("guardrails", {}) or {}
    push = raw.get("push_recall", {}) or {}
    push = push if isinstance(push, dict) else {"enabled": push}
    cfg = Config(
        path=path,
        vault=_as_path(raw.get("vault")),
        ollama_host=str(ollama.get("host") or DEFAULT_OLLAMA_HOST),
        ollama_model=str(ollama.get("model") or DEFAULT_MODEL),
        ollama_enabled=bool(ollama.get("enabled", True)),
        ollama_parallel=_bounded(ollama, "parallel", 1, 1, 64, path),
        ollama_num_ctx=_bounded(ollama, "num_ctx", 8192, 2048, 1 << 20, path),
        ollama_timeout=float(_bounded(ollama, "timeout", 600, 1, 86400, path)),
        ollama_note_budget_s=float(_bounded(ollama, "note_budget_s", 1800, 1, 7 * 86400, path)),
        timezone=str(raw.get("timezone") or ""),
        brief_chars=int(session.get("brief_chars", 4000)),
        reconcile_days=int(session.get("reconcile_days", 7)),
        guardrails=(guardrails.get("enabled", True) if isinstance(guardrails, dict) else guardrails) is not False,
        push_recall=push.get("enabled", True) is not False,
        push_floor=_fraction(push, "floor", 0.6, path),
        push_rise=_fraction(push, "rise", 0.15, path),
    )
    for name, entry in (raw.get("projects") or {}).items():
        if isinstance(entry, str):
            cfg.projects[name] = Path(entry).expanduser()
        elif isinstance(entry, dict) and entry.get("path"):
            cfg.projects[name] = Path(entry["path"]).expanduser()
            conventions = entry.get("conventions")
            if isinstance(conventions, list):
                cfg.conventions[name] = [str(c) for c in conventions]
    if os.environ.get("KG_VAULT"):
        cfg.vault = Path(os.environ["KG_VAULT"]).expanduser()
    if os.environ.get("OLLAMA_HOST"):
        cfg.ollama_host = os.environ["OLLAMA_HOST"]
    if os.environ.get("KG_MODEL"):
        cfg.ollama_model = os.environ["KG_MODEL"]
    if _off(os.environ.get("KG_OLLAMA", "")):
        cfg.ollama_enabled = False
    if _off(os.environ.get("KG_GUARDRAILS", "")):
        cfg.guardrails = False
    if _off(os.environ.get("KG_PUSH_RECALL", "")):
        cfg.push_recall = False
    return cfg


def _off(value: str) -> bool:
    return value.strip().lower() in ("off", "0", "false", "no")


def _bounded(table: dict[str, Any], key: str, default: int, low: int, high: int, path: Path) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise KgError(f"{path}: [ollama] {key} = {value!r} is not a number from {low} to {high}; fix it")
    return int(value)


def _fraction(table: dict[str, Any], key: str, default: float, path: Path) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise KgError(f"{path}: [push_recall] {key} = {value!r} is not a number from 0 to 1; fix it")
    return float(value)


def _as_path(value: object) -> Path | None:
    if not value or not isinstance(value, str):
        return None
    return Path(value).expanduser()


def find_vault_upwards(start: Path) -> Path | None:
    """The nearest enclosing folder that is a vault (has `.obsidian/` or a vault `kg-out/`)."""
    for folder in [start, *start.parents]:
        if (folder / ".obsidian").is_dir() or (folder / OUT_DIRNAME / "vault.scope").is_file():
            return folder
    return None


def find_repo_upwards(start: Path) -> Path | None:
    """The enclosing repository root, found the way git finds it (walk up to `.git`)."""
    for folder in [start, *start.parents]:
        if (folder / ".git").exists():
            return folder
    return None


def inside(path: str | Path, root: Path) -> str | None:
    """`path` relative to `root` (POSIX, real paths), or None when it lies outside, in kg-out, or hidden."""
    base = os.path.realpath(root)
    real = os.path.realpath(path)
    if not real.startswith(base + os.sep):
        return None
    rel = real[len(base) + 1 :].replace(os.sep, "/")
    parts = rel.split("/")
    if parts[0] == OUT_DIRNAME or any(p.startswith(".") for p in parts):
        return None
    return rel


def _vault_candidate(explicit: Path | None, cfg: Config, start: Path | None) -> tuple[Path | None, str]:
    """The vault asked for and where the ask came from: `--vault`, `KG_VAULT`, the enclosing vault, the config."""
    if explicit is not None:
        return explicit.expanduser(), "--vault"
    if os.environ.get("KG_VAULT"):
        return Path(os.environ["KG_VAULT"]).expanduser(), "KG_VAULT"
    try:
        here = find_vault_upwards(start if start is not None else Path.cwd())
    except OSError:
        here = None
    if here is not None:
        return here, "the current directory"
    return cfg.vault, str(cfg.path)


def resolve_vault(explicit: Path | None = None, cfg: Config | None = None, start: Path | None = None) -> Path:
    """The vault to work on: `--vault`, `KG_VAULT`, the vault enclosing `start` (default: the current
    directory), then the config file. Raises a one-line KgError when there is none."""
    candidate, how = _vault_candidate(explicit, cfg or load_config(), start)
    if candidate is None:
        raise KgError("no vault configured: pass --vault PATH, set KG_VAULT, or run `kg init --vault PATH`")
    if not candidate.is_dir():
        raise KgError(f"{candidate}: vault folder does not exist (from {how}); check the path")
    return candidate.resolve()


def find_vault(explicit: Path | None = None, cfg: Config | None = None, start: Path | None = None) -> Path | None:
    """`resolve_vault` that never raises (for hooks and status readers): None when there is no vault."""
    candidate, _ = _vault_candidate(explicit, cfg or load_config(), start)
    if candidate is None or not candidate.is_dir():
        return None
    return candidate.resolve()
