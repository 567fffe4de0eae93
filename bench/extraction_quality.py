"""Extraction quality of the LLM pass on the hand-made gold notes, next to a deterministic baseline.

    python bench/extraction_quality.py --host http://127.0.0.1:11434 --model qwen2.5:7b-instruct

Runs the real pipeline (``OllamaExtractor.extract_note``: chunking, the ``ollama`` client, the
streamed answer cut at the first repeated item, schema, retries, verification) on every
``tests/gold/*.md`` against any Ollama-compatible endpoint, with a fresh cache and
``keep_alive: 0`` (greedy output is only reproducible from an empty prompt cache). Each note's
raw answer (before verification) is kept in the ``--json`` file, so a run can be re-scored.
Prints precision / recall / F1 for entities and relations (untyped, directed, typed) for:

- the deterministic baseline: entities = the vault's note titles, aliases and wikilink targets
  found in the note's prose; relations = every pair of them on one line, in reading order, typed
  ``uses`` (the most common relation);
- the model's raw answer (validated, before verification);
- the verified edges kept as EXTRACTED or INFERRED, and EXTRACTED only;

plus seconds per note, model calls per note and the model's output speed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extract.entities import find_mention, surface_forms  # noqa: E402
from extract.llm import OllamaExtractor, prose_lines  # noqa: E402
from extract.notes import extract_note  # noqa: E402
from extract.scoring import METRICS, score  # noqa: E402
from vault_kg.model import AMBIGUOUS, EXTRACTED  # noqa: E402

_WIKILINK = re.compile(r"\[\[([^\]|#^]+)")


def load_gold(folder: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """``(relpath, text, gold)`` for every note that has a gold file beside it."""
    notes = []
    for md in sorted(folder.glob("*.md")):
        gold_path = md.with_suffix(".json")
        if gold_path.is_file():
            notes.append((md.name, md.read_text(encoding="utf-8"), json.loads(gold_path.read_text(encoding="utf-8"))))
    return notes


def vault_names(notes: list[tuple[str, str, dict[str, Any]]]) -> tuple[list[str], dict[str, list[str]]]:
    """Every note title and alias (what a vault knows without a model)."""
    known: list[str] = []
    aliases: dict[str, list[str]] = {}
    for relpath, text, _ in notes:
        meta = extract_note(relpath, text.encode()).meta
        title = meta["title"]
        own = list(meta.get("aliases") or [])
        aliases[title] = own
        known.extend([title, *own])
    return known, aliases


def baseline(text: str, known: list[str], aliases: dict[str, list[str]]) -> dict[str, Any]:
    """Deterministic-only prediction: known names and wikilink targets, co-occurrence relations."""
    raw, _ = prose_lines(text)
    names = set(known) | {m.strip() for line in raw.values() for m in _WIKILINK.findall(line)}
    forms = {name: surface_forms(name, aliases.get(name, ())) for name in names}
    found: dict[str, int] = {}
    relations = []
    for number, line in sorted(raw.items()):
        on_line = sorted(
            (pos, name) for name in names if (pos := find_mention(forms[name], line)) is not None
        )
        for _, name in on_line:
            found.setdefault(name, number)
        for i, (_, a) in enumerate(on_line):
            for _, b in on_line[i + 1 :]:
                relations.append({"source": a, "relation": "uses", "target": b})
    return {"entities": [{"name": n, "type": "concept"} for n in found], "relations": relations}


def _only(result_items: list[dict[str, Any]], allowed: set[str]) -> list[dict[str, Any]]:
    return [item for item in result_items if item.get("confidence") in allowed]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="http://127.0.0.1:11434")
    parser.add_argument("--model", required=True)
    parser.add_argument("--gold", type=Path, default=ROOT / "tests" / "gold")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--limit", type=int, default=0, help="only the first N notes")
    parser.add_argument("--json", type=Path, help="also write all predictions and scores here")
    args = parser.parse_args(argv)

    notes = load_gold(args.gold)[: args.limit or None]
    known, aliases = vault_names(notes)
    with tempfile.TemporaryDirectory() as cache_dir:
        extractor = OllamaExtractor(args.host, args.model, timeout=args.timeout, cache_dir=cache_dir, keep_alive=0)
        problem = extractor.preflight()
        if problem:
            print(problem, file=sys.stderr)
            return 1
        shown = extractor.client.show(args.model)
        size = (shown.details.parameter_size if shown.details else "") or "?"
        runs: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {
            "deterministic baseline": [], "model raw (validated)": [],
            "model verified (EXTRACTED+INFERRED)": [], "model EXTRACTED only": [],
        }
        per_note = []
        started = time.perf_counter()
        for relpath, text, gold in notes:
            t0 = time.perf_counter()
            result = extractor.extract_note(relpath, text, alias_map=aliases)
            seconds = time.perf_counter() - t0
            raw = result.raw or {"entities": [], "relations": []}
            kept = {
                "entities": _only(result.entities, {EXTRACTED}),
                "relations": _only(result.relations, {EXTRACTED, "INFERRED"}),
            }
            strict = {"entities": kept["entities"], "relations": _only(result.relations, {EXTRACTED})}
            runs["deterministic baseline"].append((gold, baseline(text, known, aliases)))
            runs["model raw (validated)"].append((gold, raw))
            runs["model verified (EXTRACTED+INFERRED)"].append((gold, kept))
            runs["model EXTRACTED only"].append((gold, strict))
            per_note.append({
                "note": relpath, "status": result.status, "message": result.message, "seconds": round(seconds, 1),
                "calls": result.calls, "chunks": result.chunks, "tokens_per_s": result.eval_tokens_per_s,
                "prompt_tokens": result.prompt_tokens, "load_average": round(os.getloadavg()[0], 2),
                "warnings": result.warnings, "raw": raw, "verified": result.to_dict(),
                "downgraded": [r for r in result.relations if r["confidence"] != EXTRACTED],
                "ambiguous": sum(1 for r in result.relations if r["confidence"] == AMBIGUOUS),
            })
            print(f"  {relpath}: {result.status}, {result.calls} calls, {seconds:.1f}s"
                  + (f" ({result.message})" if result.message else ""), file=sys.stderr, flush=True)
            if args.json:
                _write_json(args, size, extractor.digest, runs, per_note, time.perf_counter() - started)
        total = time.perf_counter() - started

    scores = {name: score(pairs) for name, pairs in runs.items()}
    speeds = [n["tokens_per_s"] for n in per_note if n["tokens_per_s"]]
    print(f"model {args.model} ({size} parameters, digest {str(extractor.digest)[:19]}) at {args.host}; {len(notes)} gold notes")
    header = f"{'':38}" + "".join(f"{m:>22}" for m in METRICS)
    print(header)
    print(f"{'':38}" + "".join(f"{'P / R / F1':>22}" for _ in METRICS))
    for name, totals in scores.items():
        cells = "".join(f"{t.precision:>8.2f}{t.recall:>7.2f}{t.f1:>7.2f}" for t in totals.values())
        print(f"{name:38}{cells}")
    pending = sum(1 for n in per_note if n["status"] != "ok")
    calls = sum(n["calls"] for n in per_note)
    loads = [n["load_average"] for n in per_note]
    print(f"seconds per note {total / max(1, len(notes)):.1f}; model calls per note {calls / max(1, len(notes)):.2f}; "
          f"prompt tokens per note {sum(n['prompt_tokens'] for n in per_note) / max(1, len(notes)):.0f}; "
          f"pending notes {pending}/{len(notes)}; output speed {sum(speeds) / len(speeds) if speeds else 0:.1f} tok/s; "
          f"1-min load average {min(loads, default=0):.1f}-{max(loads, default=0):.1f} on {os.cpu_count()} cores")
    if args.json:
        _write_json(args, size, extractor.digest, runs, per_note, total)
    return 0


def _write_json(args: argparse.Namespace, size: str, digest: str | None, runs: dict, per_note: list, seconds: float) -> None:
    """All predictions and scores so far (rewritten after every note: a long run is never lost)."""
    scores = {name: {m: t.as_dict() for m, t in score(pairs).items()} for name, pairs in runs.items()}
    args.json.write_text(json.dumps({
        "model": args.model, "host": args.host, "parameter_size": size, "digest": digest,
        "notes_done": len(per_note), "scores": scores, "seconds_total": round(seconds, 1), "notes": per_note,
    }, indent=2), encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
