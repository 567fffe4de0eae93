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

plus seconds per note, model calls per note, prompt and output tokens per note (the server's
``prompt_eval_count`` / ``eval_count``) and the model's output speed, then the same scores per
relation type and per note. Each gold set is scored on its own, never mixed: ``tests/gold`` (written
alongside the prompt and verifier) and ``tests/gold_independent`` (written without looking at them).

The server's CPU threads cannot be read over the Ollama API: state them with ``--server-threads N``
(the page and the JSON record it); ``--label NAME`` writes the page as
``docs/benchmarks/extraction_quality_live_NAME.md`` instead of ``extraction_quality.md``:

    python bench/extraction_quality.py --host URL --model qwen2.5-coder:1.5b --gold tests/gold \
        --server-threads 2 --label gold17-compact --json bench/results/extraction_quality_gold17-compact_qwen2.5-coder-1.5b.json

Re-score stored answers without a model (today's scoring and today's verification, re-run on the
stored raw answers against the gold note's text, exactly as the live run verifies them):

    python bench/extraction_quality.py --rescore bench/results/extraction_quality_new_qwen2.5-coder-1.5b.json
    python bench/extraction_quality.py --rescore old.json --notes "Globex.md,Initech.md"
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
GOLD_SETS = (ROOT / "tests" / "gold", ROOT / "tests" / "gold_independent")
STORED = "verified as stored (run-time verifier)"
ROWS = ("deterministic baseline", "stated by structure (no model)", "model raw (validated)", "model verified (EXTRACTED+INFERRED)", "model EXTRACTED only")

from extract.entities import find_mention, surface_forms  # noqa: E402
from extract.llm import OllamaExtractor, note_identity, note_subject, prose_lines, verify_note  # noqa: E402
from extract.notes import extract_note  # noqa: E402
from extract.stated_relations import stated_relations  # noqa: E402
from extract.scoring import METRICS, PRF, score  # noqa: E402
from vault_kg.core.model import AMBIGUOUS, EXTRACTED  # noqa: E402

from figures import record, watch_load  # noqa: E402

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
        on_line = sorted((pos, name) for name in names if (pos := find_mention(forms[name], line)) is not None)
        for _, name in on_line:
            found.setdefault(name, number)
        for i, (_, a) in enumerate(on_line):
            for _, b in on_line[i + 1 :]:
                relations.append({"source": a, "relation": "uses", "target": b})
    return {"entities": [{"name": n, "type": "concept"} for n in found], "relations": relations}


def stated_view(relpath: str, text: str) -> dict[str, Any]:
    """What the note's lists, tables and properties state, without a model (entities: their ends)."""
    title, own = note_identity(relpath, text)
    subject_type, props = note_subject(relpath, text, title, own)
    relations = stated_relations(prose_lines(text)[0], title, props, subject_type)
    ends = {r[end]: None for r in relations for end in ("source", "target")}
    return {"entities": [{"name": n, "type": "concept"} for n in ends], "relations": relations}


def _only(result_items: list[dict[str, Any]], allowed: set[str]) -> list[dict[str, Any]]:
    return [item for item in result_items if item.get("confidence") in allowed]


def verified_views(entities: list[dict[str, Any]], relations: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the graph keeps: EXTRACTED entities with EXTRACTED+INFERRED relations, and EXTRACTED only."""
    kept = {"entities": _only(entities, {EXTRACTED}), "relations": _only(relations, {EXTRACTED, "INFERRED"})}
    return kept, {"entities": kept["entities"], "relations": _only(relations, {EXTRACTED})}


def score_set(folder: Path, answers: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """Scores of one gold set from per-note records (``raw`` answers), verification re-run today.

    The vault (names for the baseline, aliases for verification) is the whole gold set, as in a
    live run of the set; only notes with an answer are scored. None when no note has one."""
    gold_notes = load_gold(folder)
    known, aliases = vault_names(gold_notes)
    runs: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {name: [] for name in ROWS}
    per_note = []
    as_stored: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for relpath, text, gold in gold_notes:
        rec = answers.get(relpath)
        if rec is None:
            continue
        raw = rec.get("raw") or {"entities": [], "relations": []}
        if rec.get("status", "ok") == "ok":
            title, own = note_identity(relpath, text)
            entities, relations = verify_note(raw, prose_lines(text)[0], title, own, aliases, note_subject(relpath, text, title, own))
        else:
            entities, relations = [], []
        kept, strict = verified_views(entities, relations)
        predicted = {
            "deterministic baseline": baseline(text, known, aliases),
            "stated by structure (no model)": stated_view(relpath, text),
            "model raw (validated)": raw,
            "model verified (EXTRACTED+INFERRED)": kept,
            "model EXTRACTED only": strict,
        }
        for name in ROWS:
            runs[name].append((gold, predicted[name]))
        stored = rec.get("verified") or {}
        if "relations" in stored:
            as_stored.append((gold, verified_views(stored.get("entities", []), stored["relations"])[0]))
        per_note.append(
            {
                "note": relpath,
                "gold": gold,
                "raw": raw,
                "verified": kept,
                "status": rec.get("status", "ok"),
                "calls": rec.get("calls"),
                "seconds": rec.get("seconds"),
                "output_tokens": rec.get("output_tokens"),
            }
        )
    if not per_note:
        return None
    if len(as_stored) == len(per_note):  # only when every note has one: otherwise not comparable
        runs[STORED] = as_stored
    return {"folder": folder, "notes": per_note, "scores": {name: score(pairs) for name, pairs in runs.items()}}


def _by_relation(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, PRF]:
    """Typed-relation P/R/F1 for each relation name found in the gold or the prediction."""
    names = sorted({r["relation"] for gold, pred in pairs for r in [*gold["relations"], *pred["relations"]]})
    out = {}
    for name in names:
        only = [({**g, "relations": [r for r in g["relations"] if r["relation"] == name]}, {**p, "relations": [r for r in p["relations"] if r["relation"] == name]}) for g, p in pairs]
        out[name] = score(only)["relations_typed"]
    return out


def _cell(t: PRF) -> str:
    return f"{t.precision:>8.2f}{t.recall:>7.2f}{t.f1:>7.2f}"


def print_set(result: dict[str, Any]) -> None:
    """The main table, then per relation type and per note (raw and verified)."""
    notes = result["notes"]
    try:
        label = result["folder"].relative_to(ROOT)
    except ValueError:
        label = result["folder"]
    print(f"\n== gold set {label}: {len(notes)} notes with an answer ==")
    print(f"{'':38}" + "".join(f"{m:>22}" for m in METRICS))
    print(f"{'':38}" + "".join(f"{'P / R / F1':>22}" for _ in METRICS))
    for name, totals in result["scores"].items():
        print(f"{name:38}" + "".join(_cell(t) for t in totals.values()))
    raw = _by_relation([(n["gold"], n["raw"]) for n in notes])
    ver = _by_relation([(n["gold"], n["verified"]) for n in notes])
    print(f"\nper relation type (typed){'':14}{'raw P / R / F1':>22}{'verified P / R / F1':>22}{'gold':>6}{'raw':>5}{'ver':>5}")
    for name in raw:
        r, v = raw[name], ver.get(name, PRF())
        print(f"{name:38}{_cell(r)}{_cell(v)}{r.tp + r.fn:>6}{r.tp + r.fp:>5}{v.tp + v.fp:>5}")
    print(f"\nper note (relations typed, entities){'':2}{'raw rel P/R/F1':>22}{'ver rel P/R/F1':>22}{'ent F1':>7}{'calls':>6}{'s':>7}{'out tok':>8}")
    for n in notes:
        r = score([(n["gold"], n["raw"])])
        v = score([(n["gold"], n["verified"])])
        calls = "-" if n["calls"] is None else str(n["calls"])
        secs = "-" if n["seconds"] is None else f"{n['seconds']:.1f}"
        out = "-" if n.get("output_tokens") is None else str(n["output_tokens"])
        print(
            f"{n['note'][:38]:38}{_cell(r['relations_typed'])}{_cell(v['relations_typed'])}{r['entities'].f1:>7.2f}{calls:>6}{secs:>7}{out:>8}" + ("" if n["status"] == "ok" else f"  ({n['status']})")
        )
    timed = [n for n in notes if n["seconds"] is not None and n["calls"] is not None]
    if timed:
        print(f"seconds per note {sum(n['seconds'] for n in timed) / len(timed):.1f}; model calls per note {sum(n['calls'] for n in timed) / len(timed):.2f} (over {len(timed)} notes)")


def rescore(path: Path, gold_sets: list[Path], only: list[str] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """(stored file, scored sets, answers that match no gold note) -- no model involved."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    answers = {n["note"]: n for n in doc.get("notes", [])}
    if only is not None:
        missing = [name for name in only if name not in answers]
        if missing:
            raise SystemExit(f"{path}: no stored answer for {', '.join(missing)}; pick notes the file finished")
        answers = {name: answers[name] for name in only}
    results = [r for folder in gold_sets if (r := score_set(folder, answers)) is not None]
    scored = {n["note"] for r in results for n in r["notes"]}
    return doc, results, sorted(set(answers) - scored)


def _rescore_main(args: argparse.Namespace) -> int:
    path: Path = args.rescore
    try:
        doc, results, stray = rescore(path, args.gold or list(GOLD_SETS), args.notes)
    except (OSError, ValueError) as exc:
        print(f"{path}: cannot re-score ({exc}); give a JSON written by this script's --json", file=sys.stderr)
        return 1
    written = doc.get("written") or "not recorded (file modified " + datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M UTC)")
    state = (
        f"RE-SCORE of stored answers in {path.name}: model {doc.get('model')} ({doc.get('parameter_size', '?')} parameters, "
        f"digest {str(doc.get('digest'))[:19]}), run written {written}; no model called, today's scoring and verification"
    )
    page = "extraction_quality_rescore_" + path.stem.removeprefix("extraction_quality_") + ("_" + "-".join(g.name for g in args.gold) if args.gold else "")
    with record(page, model_state=state):  # one page per stored file (and gold subset) re-scored
        print(state)
        print(f"file: {path}; {doc.get('notes_done', len(doc.get('notes', [])))} notes stored" + (f"; restricted to {len(args.notes)} notes (--notes)" if args.notes else ""))
        for result in results:
            print_set(result)
        for folder in {r["folder"] for r in results} ^ set(args.gold or GOLD_SETS):
            print(f"\n== gold set {folder.name}: no stored answer for any of its {len(load_gold(folder))} notes (not scored) ==")
        if stray:
            print(f"\nanswers matching no gold note in these sets (not scored): {', '.join(stray)}")
    return 0


def _no_model_main(args: argparse.Namespace) -> int:
    with record("extraction_quality_no_model", model_state="no model called (deterministic rows only)"):
        print("NO MODEL: the deterministic baseline and the relations the notes' structure states, on every gold note (the model rows score an empty answer plus the stated relations)")
        for folder in args.gold or list(GOLD_SETS):
            names = [n for n, _, _ in load_gold(folder) if args.notes is None or n in args.notes]
            result = score_set(folder, {n: {"note": n, "status": "ok", "raw": None} for n in names})
            if result:
                print_set(result)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="http://127.0.0.1:11434")
    parser.add_argument("--model", help="the model to run (not needed with --rescore)")
    parser.add_argument("--gold", type=Path, action="append", help="a gold folder (repeatable); default: tests/gold and tests/gold_independent, scored separately")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--limit", type=int, default=0, help="only the first N notes of each set")
    parser.add_argument("--json", type=Path, help="also write all predictions and scores here")
    parser.add_argument("--rescore", type=Path, help="re-score a --json file's stored answers (no model)")
    parser.add_argument("--no-model", action="store_true", help="score only what needs no model (baseline, relations stated by structure) on every gold note")
    parser.add_argument(
        "--notes", type=lambda v: [n.strip() for n in v.split(",") if n.strip()], help="only these notes, comma-separated file names (live run or --rescore), e.g. the notes two runs both finished"
    )
    parser.add_argument("--server-threads", type=int, help="CPU threads the model server runs with (recorded on the page; not readable over the API)")
    parser.add_argument("--label", help="write the page as docs/benchmarks/extraction_quality_live_LABEL.md (a live run)")
    args = parser.parse_args(argv)
    if args.rescore:
        return _rescore_main(args)
    if args.no_model:
        return _no_model_main(args)
    if not args.model:
        parser.error("--model is required unless --rescore is given")
    return _live_main(args)


def _live_main(args: argparse.Namespace) -> int:
    watch_load()  # the page's load before and during covers the model calls, not only the scoring
    notes = [(folder, note) for folder in (args.gold or list(GOLD_SETS)) for note in load_gold(folder)[: args.limit or None] if args.notes is None or note[0] in args.notes]
    if args.notes is not None and len(notes) != len(args.notes):
        found = {note[0] for _, note in notes}
        parser_error = ", ".join(n for n in args.notes if n not in found)
        print(f"--notes: no gold note named {parser_error} in {', '.join(str(f) for f in (args.gold or GOLD_SETS))}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as cache_dir:
        extractor = OllamaExtractor(args.host, args.model, timeout=args.timeout, cache_dir=cache_dir, keep_alive=0)
        problem = extractor.preflight()
        if problem:
            print(problem, file=sys.stderr)
            return 1
        shown = extractor.show()
        size = (shown.details.parameter_size if shown.details else "") or "?"
        per_note = []
        started = time.perf_counter()
        vaults = {folder: vault_names(load_gold(folder)) for folder in {f for f, _ in notes}}  # the whole set is the vault
        for folder, (relpath, text, _gold) in notes:
            t0 = time.perf_counter()
            result = extractor.extract_note(relpath, text, alias_map=vaults[folder][1])
            seconds = time.perf_counter() - t0
            per_note.append(
                {
                    "note": relpath,
                    "gold_set": folder.name,
                    "status": result.status,
                    "message": result.message,
                    "seconds": round(seconds, 1),
                    "calls": result.calls,
                    "chunks": result.chunks,
                    "tokens_per_s": result.eval_tokens_per_s,
                    "prompt_tokens": result.prompt_tokens,
                    "output_tokens": result.output_tokens,
                    "load_average": round(os.getloadavg()[0], 2),
                    "warnings": result.warnings,
                    "raw": result.raw or {"entities": [], "relations": []},
                    "verified": result.to_dict(),
                    "downgraded": [r for r in result.relations if r["confidence"] != EXTRACTED],
                    "ambiguous": sum(1 for r in result.relations if r["confidence"] == AMBIGUOUS),
                }
            )
            print(f"  {relpath}: {result.status}, {result.calls} calls, {seconds:.1f}s" + (f" ({result.message})" if result.message else ""), file=sys.stderr, flush=True)
            if args.json:
                _write_json(args, size, extractor.digest, per_note, time.perf_counter() - started)
        total = time.perf_counter() - started

    state = f"{args.model} ({size} parameters, digest {str(extractor.digest)[:19]}) at {args.host}, keep_alive 0, fresh cache; server threads: {args.server_threads or 'not stated (--server-threads)'}"
    with record("extraction_quality" + (f"_live_{args.label}" if args.label else ""), model_state=state):
        print(f"model {state}; {len(notes)} gold notes")
        for folder in dict.fromkeys(f for f, _ in notes):
            answers = {n["note"]: n for n in per_note if n["gold_set"] == folder.name}
            result = score_set(folder, answers)
            if result:
                print_set(result)
        speeds = [n["tokens_per_s"] for n in per_note if n["tokens_per_s"]]
        pending = sum(1 for n in per_note if n["status"] != "ok")
        calls = sum(n["calls"] for n in per_note)
        loads = [n["load_average"] for n in per_note]
        print(
            f"\nall sets: seconds per note {total / max(1, len(notes)):.1f}; model calls per note {calls / max(1, len(notes)):.2f}; "
            f"prompt tokens per note {sum(n['prompt_tokens'] for n in per_note) / max(1, len(notes)):.0f}; "
            f"output tokens per note {sum(n['output_tokens'] for n in per_note) / max(1, len(notes)):.0f}; "
            f"pending notes {pending}/{len(notes)}; output speed {sum(speeds) / len(speeds) if speeds else 0:.1f} tok/s; "
            f"1-min load average {min(loads, default=0):.1f}-{max(loads, default=0):.1f} on {os.cpu_count()} cores"
        )
    if args.json:
        _write_json(args, size, extractor.digest, per_note, total)
    return 0


def _write_json(args: argparse.Namespace, size: str, digest: str | None, per_note: list, seconds: float) -> None:
    """All answers so far (rewritten after every note: a long run is never lost); --rescore reads it."""
    args.json.write_text(
        json.dumps(
            {
                "model": args.model,
                "host": args.host,
                "parameter_size": size,
                "digest": digest,
                "server_threads": args.server_threads,
                "written": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "notes_done": len(per_note),
                "seconds_total": round(seconds, 1),
                "notes": per_note,
            },
            indent=2,
        ),
        encoding="utf-8",
    )


if __name__ == "__main__":
    raise SystemExit(main())
