"""Extraction end to end on the independent gold set (`tests/gold_heldout`), the way a user gets it.

    python bench/extraction_heldout.py --half heldout --no-model
    python bench/extraction_heldout.py --half heldout --host http://127.0.0.1:11434 --model qwen2.5-coder:1.5b --server-threads 1
    python bench/extraction_heldout.py --half heldout --host URL --answers /tmp/heldout-answers   # cold, keeps the answers
    python bench/extraction_heldout.py --half heldout --host URL --answers /tmp/heldout-answers \
        --code /tmp/main-before --label heldout_model_before   # the previous main on the same answers

One half of the 40 frozen notes (``tune`` for choosing, ``heldout`` for reporting: the held-out half
never chooses anything) is copied into a fresh vault, `kg build --wait` runs as a user runs it (the
model pass through the real ``ollama`` client against ``--host``, cold: a fresh answer cache; or
``KG_OLLAMA=off`` with ``--no-model``), and the entities and relations are read back from
``kg-out/graph.json``, never from inside kg:

- a note's entities: the note itself (its title: the note node is the entity its notes are
  about) and the ends of the ``mentions`` edges the note owns, with their ``entity_type``;
- a note's relations: the edges it owns whose relation is one of the eight typed verbs
  (``uses``, ``depends_on``, ``owns``, ``works_on``, ``part_of``, ``replaces``,
  ``integrates_with``, ``client_of``), AMBIGUOUS ones left out (kg shows them as doubtful);
  ``integrates_with`` is symmetric, so it counts in either direction.

Scored with ``extract.scoring`` (a name matches the gold name or one of its aliases, canonical
form), micro-averaged over the half's notes, plus model calls per note (``kg llm status
--json``), seconds per note (the build's wall time over the notes) and notes left pending.
The note texts are not committed: materialise them first with the commands in
``tests/gold_heldout/fetch_notes.md`` (``--notes DIR``, default ``/tmp/gold_heldout_notes``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
GOLD = ROOT / "tests" / "gold_heldout"
KG = str(Path(sys.executable).with_name("kg"))
VERBS = ("uses", "depends_on", "owns", "works_on", "part_of", "replaces", "integrates_with", "client_of")

from extract.entities import canonical_name  # noqa: E402
from extract.scoring import METRICS, score  # noqa: E402
from figures import record, watch_load  # noqa: E402


def load_half(half: str, notes_dir: Path) -> list[tuple[dict[str, Any], dict[str, Any], Path]]:
    """(notes.json row, gold, note file) for each note of the half; a missing text says how to make it."""
    rows = json.loads((GOLD / "notes.json").read_text(encoding="utf-8"))
    out = []
    for row in rows:
        if half != "all" and row["half"] != half:
            continue
        path = notes_dir / f"{row['title']}.md"
        if not path.is_file():
            raise SystemExit(f"{path}: missing; materialise the notes with tests/gold_heldout/fetch_notes.md (OUT={notes_dir})")
        out.append((row, json.loads((GOLD / row["gold"]).read_text(encoding="utf-8")), path))
    return out


def predicted(graph: dict[str, Any], relpath: str, title: str) -> dict[str, Any]:
    """What graph.json says the note names and states (see the module docstring)."""
    nodes = {n["id"]: n for n in graph["nodes"]}
    note_id = f"note:{relpath}"
    entities: dict[str, dict[str, Any]] = {canonical_name(title): {"name": title, "type": nodes.get(note_id, {}).get("entity_type")}}
    relations = []
    for edge in graph["edges"]:
        if edge.get("owner") != relpath:
            continue
        if edge.get("relation") == "mentions" and edge["source"] == note_id:
            node = nodes.get(edge["target"], {})
            name = node.get("label") or edge["target"]
            entities.setdefault(canonical_name(name), {"name": name, "type": node.get("entity_type")})
        elif edge.get("relation") in VERBS and edge.get("confidence") != "AMBIGUOUS":
            ends = [nodes.get(edge[end], {}).get("label") or edge[end] for end in ("source", "target")]
            relations.append({"source": ends[0], "relation": edge["relation"], "target": ends[1]})
    return {"entities": list(entities.values()), "relations": relations}


def symmetric(gold: dict[str, Any], pred: dict[str, Any]) -> dict[str, Any]:
    """``integrates_with`` either way round counts as the gold's direction."""
    wanted = {(canonical_name(r["target"]), canonical_name(r["source"])) for r in gold.get("relations", []) if r["relation"] == "integrates_with"}
    flipped = []
    for rel in pred["relations"]:
        if rel["relation"] == "integrates_with" and (canonical_name(rel["source"]), canonical_name(rel["target"])) in wanted:
            rel = {**rel, "source": rel["target"], "target": rel["source"]}
        flipped.append(rel)
    return {**pred, "relations": flipped}


def run(args: argparse.Namespace) -> int:
    watch_load()
    notes = load_half(args.half, Path(args.notes))
    work = Path(tempfile.mkdtemp(prefix="kg-heldout-"))
    try:
        vault = work / "vault"
        vault.mkdir()
        for _, _, path in notes:
            shutil.copyfile(path, vault / path.name)
        env = {**os.environ, "KG_CONFIG": str(work / "config.toml"), "KG_HTML": "off", "KG_EMBEDDERS": "", "KG_LLM_CACHE": str(Path(args.answers).resolve() if args.answers else work / "llm-cache")}
        reused = bool(args.answers) and any(Path(args.answers).glob("**/*"))
        (work / "config.toml").write_text(f'vault = "{vault}"\n', encoding="utf-8")
        if args.code:
            env["PYTHONPATH"] = os.pathsep.join([str(Path(args.code).resolve()), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        if args.no_model:
            env.update(KG_OLLAMA="off", KG_NAMES="on")  # what kg finds without Ollama, names on
        else:
            env.update(OLLAMA_HOST=args.host, KG_MODEL=args.model)
        started = time.monotonic()
        build = subprocess.run([KG, "build", "--vault", str(vault), *([] if args.no_model else ["--wait"])], env=env, capture_output=True, text=True, timeout=args.timeout)
        seconds = time.monotonic() - started
        if build.returncode:
            print(build.stdout + build.stderr)
            return build.returncode
        status: dict[str, Any] = {}
        if not args.no_model:
            out = subprocess.run([KG, "llm", "status", "--vault", str(vault), "--json"], env=env, capture_output=True, text=True, timeout=60)
            status = json.loads(out.stdout or "{}")
        graph = json.loads((vault / "kg-out" / "graph.json").read_text(encoding="utf-8"))
        pairs, per_note = [], []
        for row, gold, path in notes:
            pred = symmetric(gold, predicted(graph, path.name, row["title"]))
            pairs.append((gold, pred))
            one = score([(gold, pred)])
            per_note.append((row["id"], row["kind"], one["entities"].f1, one["relations_directed"].f1, len(pred["entities"]), len(pred["relations"])))
        report(args, score(pairs), per_note, seconds, status, len(notes), reused)
    finally:
        subprocess.run([KG, "llm", "stop", "--vault", str(work / "vault")], env={**os.environ, "KG_CONFIG": str(work / "config.toml")}, capture_output=True, timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    return 0


def report(args: argparse.Namespace, scores: dict[str, Any], per_note: list[tuple[Any, ...]], seconds: float, status: dict[str, Any], count: int, reused: bool) -> None:
    cache = f"the answers an earlier run left in {args.answers} (no new call: verification and graph only)" if reused else "cold answer cache"
    model = "none (KG_OLLAMA=off): entities and relations the notes state by their form" if args.no_model else f"{args.model} at {args.host}, {args.server_threads or '?'} server thread(s), {cache}"
    code = subprocess.run(["git", "-C", args.code or str(ROOT), "log", "-1", "--format=%h %s"], capture_output=True, text=True).stdout.strip()[:90]
    dirty = subprocess.run(["git", "-C", args.code or str(ROOT), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    print(f"gold: tests/gold_heldout, half {args.half!r}: {count} notes · model: {model}")
    print(f"code: {args.code or 'this checkout'} at {code}{' (with uncommitted changes)' if dirty else ''}")
    print(f"end to end: `kg build{'' if args.no_model else ' --wait'}` {seconds:.1f} s ({seconds / count:.1f} s per note)")
    if status:
        calls = status.get("calls") or 0
        print(f"model calls: {calls} ({calls / count:.2f} per note) · notes done {status.get('done')} · pending {status.get('pending')} · failed {len(status.get('failed') or [])}")
    print()
    print(f"| {'metric':<20} | {'P':>5} | {'R':>5} | {'F1':>5} | tp / fp / fn |")
    print(f"|{'-' * 22}|{'-' * 7}|{'-' * 7}|{'-' * 7}|{'-' * 14}|")
    for metric in METRICS:
        s = scores[metric]
        print(f"| {metric:<20} | {s.precision:5.2f} | {s.recall:5.2f} | {s.f1:5.2f} | {s.tp} / {s.fp} / {s.fn} |")
    print()
    print("by note: id, kind, entity F1, directed relation F1, entities and relations read from graph.json")
    for row in per_note:
        print(f"  {row[0]:<14} {row[1]:<11} {row[2]:4.2f} {row[3]:4.2f} {row[4]:4d} {row[5]:4d}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("tune", "heldout", "all"), default="heldout")
    parser.add_argument("--notes", default="/tmp/gold_heldout_notes", help="folder of the materialised notes (fetch_notes.md)")
    parser.add_argument("--no-model", action="store_true", help="the model pass off: what kg finds without Ollama")
    parser.add_argument("--host", default=os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434"))
    parser.add_argument("--model", default="qwen2.5-coder:1.5b")
    parser.add_argument("--server-threads", type=int, default=None, help="the server's CPU threads (not readable over the API)")
    parser.add_argument("--timeout", type=float, default=7200)
    parser.add_argument("--answers", default=None, help="keep the model's answer cache in DIR; a later run (e.g. --code of the previous main) re-verifies the same answers without a call")
    parser.add_argument("--code", default=None, help="run kg from another source tree (e.g. a worktree of the previous main), through PYTHONPATH")
    parser.add_argument("--label", default=None, help="page name suffix (default: the half and the model state)")
    args = parser.parse_args(argv)
    label = args.label or f"{args.half}_{'no_model' if args.no_model else 'model'}"
    with record(f"extraction_heldout_{label}"):
        return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
