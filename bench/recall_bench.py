"""Benchmark of episodic recall on a generated journal (default 365 days).

Prints: cold index time, no-op re-index, recall latency as a whole `kg recall` process and
in-process, peak RSS, and Recall@5 on the labelled questions (each with its true day).

    /tmp/kgenv/bin/python bench/recall_bench.py [--days 365] [--runs 5] [--vault DIR]

Targets on the 2-core machines: no-op re-index <= 1 s, recall <= 1.5 s as a process and
<= 100 ms in-process, RSS <= 600 MB, Recall@5 >= 0.9.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from episodic_corpus import TASKS, write_journal  # noqa: E402

from episodic.recall import JournalIndex, recall  # noqa: E402

END = date(2025, 6, 30)
# Questions that say what the labelled question says in other words: few content words in common
# with the journal entry they should find (the overlap is measured and printed).
PARAPHRASES = {
    "when did I fix the webhook retries": "when did failed payment-provider callbacks start trying again with growing delays",
    "idempotency keys for refunds": "stop customers getting their money back two times on a double press",
    "switch invoice PDFs to WeasyPrint": "changed the tool that turns bills into printable documents because typefaces were missing",
    "ledger drift on euro payouts rounding": "accounting mismatch on money sent out in the European currency",
    "rotate PayPal sandbox credentials": "replaced the test passwords of the other wallet provider in the build pipeline",
    "postgres major version upgrade": "moving our relational database onto a newer major release",
    "shrinking the docker image": "making the container we ship much smaller",
    "why were kubernetes nodes killing pods out of memory": "cluster machines kept terminating workloads for lack of RAM",
    "TLS certificate renewal automation": "making the HTTPS cert refresh itself",
    "redis eviction policy change": "what the in-memory store drops once it runs full of logins",
    "dark mode for the dashboard": "a night theme for the admin screens",
    "orders table memory leak with infinite scroll": "the purchases list eating RAM as you keep going down the page",
    "translate onboarding into German": "the signup steps for users in Berlin and Lisbon",
    "reduce the JS bundle size with lazy loading": "shipping less frontend code by fetching graphs only when needed",
    "synonyms in product search": "treating words that mean the same as equal when shoppers look for items",
    "android push notifications crashing": "the phone app falling over when alerts arrive on the newest Google OS",
    "app cold start time improvement": "making the mobile program open faster",
    "airflow DAG loading events twice after the clock change": "duplicate rows in the warehouse once the clocks went forward",
    "switch password hashing to argon2": "a stronger way to store user secrets",
    "passkeys login": "signing in with a fingerprint instead of typing anything",
    "refresh token rotation": "renewing session credentials and catching stolen ones",
    "ADR about NATS versus Kafka": "the write-up on which message broker we picked",
}
STOP = set(
    "a an the of to in on for and or with by at from as is was were be been it its this that what when why how did do i we our my "
    "into onto out up down more most much so no not than then there their they them you your new".split()
)


def content_words(text: str) -> set[str]:
    import re

    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP and len(w) > 1}


def overlap(question: str, entry: str) -> float:
    """The share of the question's content words that appear in the entry."""
    words = content_words(question)
    return len(words & content_words(entry)) / len(words) if words else 0.0


UTC = ZoneInfo("UTC")
NOW = datetime.combine(END + timedelta(days=1), datetime.min.time()).replace(hour=9, tzinfo=UTC)


def _rss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def _kg_command() -> list[str]:
    kg = Path(sys.executable).parent / "kg"
    return [str(kg)] if kg.exists() else [sys.executable, "-m", "vault_kg.cli.entry"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--runs", type=int, default=5, help="runs of the `kg recall` process")
    parser.add_argument("--vault", type=Path, help="reuse/keep the generated vault here")
    args = parser.parse_args()

    vault = args.vault or Path(tempfile.mkdtemp(prefix="recall-bench-"))
    vault.mkdir(parents=True, exist_ok=True)
    if not (vault / "journal").is_dir():
        started = time.perf_counter()
        labelled = write_journal(vault, days=args.days, end=END)
        print(f"generated journal: {args.days} days in {time.perf_counter() - started:.1f} s  ({vault})")
    else:
        labelled = write_journal(Path(tempfile.mkdtemp()), days=args.days, end=END)  # same seed: same labels
    entries = sum(p.read_text(encoding="utf-8").count("\n## ") for p in (vault / "journal").glob("*.md"))
    print(f"journal: {len(list((vault / 'journal').glob('*.md')))} day files, {entries} entries")

    started = time.perf_counter()
    with JournalIndex(vault) as index:
        stats = index.sync()
    print(f"cold index: {time.perf_counter() - started:.1f} s ({stats.indexed_files} files, {stats.chunks} chunks embedded)")

    noop_sync, noop_open = [], []
    for _ in range(3):
        started = time.perf_counter()
        with JournalIndex(vault) as index:
            index.sync()  # connects
            t = time.perf_counter()
            again = index.sync()
            noop_sync.append(time.perf_counter() - t)
        noop_open.append(time.perf_counter() - started)
        assert again.indexed_files == again.removed_files == 0
    print(f"no-op re-index: {statistics.median(noop_sync) * 1000:.1f} ms (sync call), {statistics.median(noop_open) * 1000:.0f} ms (open + sync + close, warm process)")

    questions = [(item.question, item.day) for item in labelled]
    dated = [(f"{q} in {d:%B %Y}", d) for q, d in questions]
    paraphrased = [(PARAPHRASES[q], d) for q, d in questions if q in PARAPHRASES]
    entry_of = {t.question: t.text for t in TASKS}
    pairs = {
        "labelled": [(q, entry_of[q]) for q, _ in questions],
        "paraphrased": [(PARAPHRASES[q], entry_of[q]) for q, _ in questions if q in PARAPHRASES],
    }
    for name, batch in pairs.items():
        shares = [overlap(q, entry) for q, entry in batch]
        print(
            f"{name} questions: {len(batch)}; content words found in their entry: mean {statistics.mean(shares):.0%}, "
            f"{sum(s == 1 for s in shares)} fully covered, {sum(s == 0 for s in shares)} sharing none"
        )
    hits_at_5 = {"undated": 0, "dated": 0, "paraphrased": 0}
    latencies: list[float] = []
    with JournalIndex(vault) as index:
        recall(vault, "warm up", now=NOW, tz=UTC, index=index)
        for kind, batch in (("undated", questions), ("dated", dated), ("paraphrased", paraphrased)):
            for question, day in batch:
                t = time.perf_counter()
                result = recall(vault, question, now=NOW, tz=UTC, limit=5, index=index)
                latencies.append(time.perf_counter() - t)
                if day in [h.entry.day for h in result.hits]:
                    hits_at_5[kind] += 1
                elif os.environ.get("BENCH_VERBOSE"):
                    print(f"  miss: {question!r} (true {day}) got {[str(h.entry.day) for h in result.hits]}")
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    print(f"recall in-process (index open): median {statistics.median(latencies) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms over {len(latencies)} questions")

    per_call = []
    for question, _ in questions[:5]:
        t = time.perf_counter()
        recall(vault, question, now=NOW, tz=UTC, limit=5)
        per_call.append(time.perf_counter() - t)
    print(f"recall in-process (open + sync + search + close per call): median {statistics.median(per_call) * 1000:.0f} ms")

    command = _kg_command()
    process_times = []
    env = {**os.environ, "KG_CONFIG": str(vault / "no-config.toml")}
    for question, _ in questions[: args.runs]:
        t = time.perf_counter()
        done = subprocess.run([*command, "recall", question, "--vault", str(vault), "--limit", "5"], capture_output=True, text=True, env=env)
        process_times.append(time.perf_counter() - t)
        if done.returncode != 0:
            sys.exit(f"kg recall failed: {done.stderr.strip()}")
    print(f"recall as a process ({' '.join(Path(c).name for c in command)} recall): median {statistics.median(process_times):.2f} s, max {max(process_times):.2f} s over {len(process_times)} runs")
    print(f"peak RSS: bench process {_rss_mb(resource.RUSAGE_SELF):.0f} MB (generation + cold index + searches), kg recall process {_rss_mb(resource.RUSAGE_CHILDREN):.0f} MB")

    total = len(questions) + len(dated)
    print(
        f"Recall@5, labelled questions: {(hits_at_5['undated'] + hits_at_5['dated']) / total:.3f} over {total} "
        f"(undated {hits_at_5['undated']}/{len(questions)}, with a month {hits_at_5['dated']}/{len(dated)})"
    )
    print(f"Recall@5, paraphrased questions: {hits_at_5['paraphrased'] / max(1, len(paraphrased)):.3f} ({hits_at_5['paraphrased']}/{len(paraphrased)})")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("recall_bench"):
        main()
