"""On-disk cache of validated model answers, one entry per chunk, so unchanged prose never costs a
model call again.

The key covers everything that can change the answer: what the model sees (the chunk's prompt:
prose, title, known names), the model's digest, the prompt version, the schema version and the
generation options. Entries are written atomically (temp file + ``os.replace``) as each answer
arrives, so a killed worker loses at most the call in flight, and a crash never leaves a
half-written entry behind. ``collect`` drops entries no answered note uses.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# hashlib, orjson and tempfile are imported where they are used: a no-op `kg update` reaches this
# module only for `cache_dir_for` (the model pass's mode), and they cost more than the rest of it.

ENTRY_SUFFIX = ".json"
MODELS_FILE = "models.json"


def default_cache_dir(scope_root: Path) -> Path:
    """Where a vault keeps its LLM cache: ``<vault>/kg-out/cache/llm/``."""
    return scope_root / "kg-out" / "cache" / "llm"


def cache_dir_for(out: Path) -> Path:
    """The answer cache of the scope whose artifacts live in ``out`` (``KG_LLM_CACHE`` overrides:
    builds into other folders can share one vault's answers)."""
    explicit = os.environ.get("KG_LLM_CACHE")
    return Path(explicit) if explicit else Path(out) / "cache" / "llm"


def cache_key(
    content_hash: str,
    model: str,
    digest: str,
    prompt_version: int,
    schema_version: int,
    options: dict[str, Any],
) -> str:
    """A stable hex key; any change in one of its parts means a new extraction."""
    import hashlib

    import orjson

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
    import tempfile

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
        import orjson

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
        import orjson

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

    def _models(self) -> dict[str, Any]:
        import orjson

        try:
            known = orjson.loads((self.root / MODELS_FILE).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return {}
        return known if isinstance(known, dict) else {}

    def model_info(self, model: str) -> dict[str, Any]:
        """``{"digest", "context_length"}`` recorded when the model last answered a preflight, so
        the engine can compute cache keys without contacting Ollama; ``{}`` when never seen."""
        value = self._models().get(model)
        return value if isinstance(value, dict) and isinstance(value.get("digest"), str) else {}

    def last_digest(self, model: str) -> str | None:
        return self.model_info(model).get("digest")

    def remember_model(self, model: str, digest: str, context_length: int | None) -> None:
        entry = {"digest": digest, "context_length": context_length}
        known = self._models()
        if known.get(model) == entry:
            return
        known[model] = entry
        import orjson

        _atomic_write(self.root / MODELS_FILE, orjson.dumps(known, option=orjson.OPT_SORT_KEYS))
