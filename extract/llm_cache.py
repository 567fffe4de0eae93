"""On-disk cache of validated LLM extractions, so an unchanged note never costs a model call again.

The key covers everything that can change the model's answer: the note's content hash, the model's
digest, the prompt version, the schema version and the generation options. Entries are written
atomically (temp file + ``os.replace``) and only after validation, so a crash or an invalid answer
never leaves a half-written or wrong entry behind. ``collect`` drops entries no live note uses.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

ENTRY_SUFFIX = ".json"
MODELS_FILE = "models.json"


def default_cache_dir(scope_root: Path) -> Path:
    """Where a vault keeps its LLM cache: ``<vault>/kg-out/cache/llm/``."""
    return scope_root / "kg-out" / "cache" / "llm"


def cache_key(
    content_hash: str,
    model: str,
    digest: str,
    prompt_version: int,
    schema_version: int,
    options: dict[str, Any],
) -> str:
    """A stable hex key; any change in one of its parts means a new extraction."""
    material = orjson.dumps(
        {
            "content": content_hash,
            "model": model,
            "digest": digest,
            "prompt": prompt_version,
            "schema": schema_version,
            "options": options,
        },
        option=orjson.OPT_SORT_KEYS,
    )
    return hashlib.sha256(material).hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class LlmCache:
    """Validated extraction payloads by key, plus the last digest seen for each model."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.entries = self.root / "entries"

    def _path(self, key: str) -> Path:
        return self.entries / key[:2] / f"{key}{ENTRY_SUFFIX}"

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached payload, or None; an unreadable entry is a miss and is removed."""
        path = self._path(key)
        try:
            payload = orjson.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, orjson.JSONDecodeError):
            path.unlink(missing_ok=True)
            return None
        return payload if isinstance(payload, dict) else None

    def put(self, key: str, payload: dict[str, Any]) -> None:
        _atomic_write(self._path(key), orjson.dumps(payload))

    def keys(self) -> set[str]:
        if not self.entries.is_dir():
            return set()
        return {p.name[: -len(ENTRY_SUFFIX)] for p in self.entries.glob(f"*/*{ENTRY_SUFFIX}")}

    def collect(self, live_keys: Iterable[str]) -> int:
        """Remove every entry whose key is not live; returns how many were removed."""
        live = set(live_keys)
        removed = 0
        for key in self.keys() - live:
            self._path(key).unlink(missing_ok=True)
            removed += 1
        if self.entries.is_dir():
            for shard in self.entries.iterdir():
                if shard.is_dir() and not any(shard.iterdir()):
                    shard.rmdir()
        return removed

    def last_digest(self, model: str) -> str | None:
        """The digest recorded when the model was last reachable (lets cached notes load offline)."""
        try:
            known = orjson.loads((self.root / MODELS_FILE).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        value = known.get(model) if isinstance(known, dict) else None
        return value if isinstance(value, str) else None

    def remember_digest(self, model: str, digest: str) -> None:
        if self.last_digest(model) == digest:
            return
        try:
            known = orjson.loads((self.root / MODELS_FILE).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            known = {}
        if not isinstance(known, dict):
            known = {}
        known[model] = digest
        _atomic_write(self.root / MODELS_FILE, orjson.dumps(known, option=orjson.OPT_SORT_KEYS))
