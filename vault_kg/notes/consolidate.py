"""`kg consolidate`: a reviewable plan for tidying the vault, and an apply step that does only that.

`plan()` looks at the notes as they are on disk (no build needed, no model) and proposes:
merges of near-duplicate notes (same normalized title or alias, or word 5-shingle Jaccard over
the body), frontmatter fixes for notes outside the contract, a link to each orphan note from the
note sharing most of its topic tags, relinks of dangling wikilinks to a likely target, and splits
of oversized notes by their `##` sections. The plan is markdown for people with a fenced JSON
block for the machine; `apply()` performs exactly the actions left in that block, refuses if a
note changed since the plan was made, writes every note through `vault_write.write_note`, and
makes one git commit (when the vault is a repository) so `git revert` undoes the whole apply.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import posixpath
import re
import unicodedata
import zlib
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vault_kg.core import model as m
from vault_kg.core.errors import KgError

__all__ = [
    "COMMON_SHINGLE_NOTES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "DEFAULT_SIMILARITY",
    "LIKELY_TARGET_RATIO",
    "MAX_PLAN_BYTES",
    "MIN_BODY_WORDS",
    "MIN_SPLIT_SECTIONS",
    "Note",
    "PLAN_KEY",
    "PLAN_VERSION",
    "SCOPE_FALLBACK",
    "SHINGLE_WORDS",
    "SKIP_FOLDERS",
    "TOPIC_FALLBACK",
    "apply",
    "format_applied",
    "format_plan_summary",
    "h2_title",
    "load_notes",
    "name_key",
    "paragraphs",
    "plan",
    "read_plan",
    "render_markdown",
    "sha256",
    "shingles",
    "split_head",
]

PLAN_VERSION = 1
PLAN_KEY = "kg_consolidate_plan"
SHINGLE_WORDS = 5
MIN_BODY_WORDS = 20
DEFAULT_SIMILARITY = 0.6
COMMON_SHINGLE_NOTES = 50  # a shingle in more notes than this is boilerplate, not evidence
DEFAULT_MAX_LINES = 400
DEFAULT_MAX_BYTES = 40_000
MAX_PLAN_BYTES = 64 * 1024 * 1024
MIN_SPLIT_SECTIONS = 2
LIKELY_TARGET_RATIO = 0.85
SCOPE_FALLBACK = "scope/global"
TOPIC_FALLBACK = "topic"
SKIP_FOLDERS = ("journal/",)

_HEAD_RE = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n(?:.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_JSON_BLOCK_RE = re.compile(r"```json[ \t]*\n(.*?)\n```", re.DOTALL)
_WORD_RE = re.compile(r"\w+", re.UNICODE)
_H2_START_RE = re.compile(r"##([ \t]+)")
_SENTENCE_RE = re.compile(r"^(.{20,200}?[.!?])(?:\s|$)")


@dataclass
class Note:
    rel: str
    text: str
    ext: m.Extraction

    @property
    def digest(self) -> str:
        return sha256(self.text)

    @property
    def title(self) -> str:
        return str(self.ext.meta.get("title") or posixpath.splitext(posixpath.basename(self.rel))[0])

    @property
    def body(self) -> str:
        return split_head(self.text)[1]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def split_head(text: str) -> tuple[str, str]:
    """(frontmatter block including its `---` lines, body) — the body byte-exact."""
    match = _HEAD_RE.match(text)
    return (match.group(0), text[match.end() :]) if match else ("", text)


def name_key(name: str) -> str:
    """A title or alias reduced for comparison: no accents, case, punctuation or plural `s`."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c)).lower()
    words = [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in _WORD_RE.findall(plain)]
    return " ".join(words)


def shingles(text: str) -> set[int]:
    words = _WORD_RE.findall(text.lower())
    if len(words) < MIN_BODY_WORDS:
        return set()
    return {zlib.crc32(" ".join(words[i : i + SHINGLE_WORDS]).encode()) for i in range(len(words) - SHINGLE_WORDS + 1)}


def load_notes(vault: Path) -> dict[str, Note]:
    from extract.notes import VaultAdapter, extract_note

    from extract.notes import MAX_NOTE_BYTES

    from vault_kg.core.safe_read import read_regular

    sources, _ = VaultAdapter().list_sources(vault)
    notes: dict[str, Note] = {}
    for rel in sources:
        try:
            data = read_regular(vault / rel, MAX_NOTE_BYTES + 1, root=vault, trust_folders=True)
        except OSError:
            continue
        ext = extract_note(rel, data)
        notes[rel] = Note(rel, data.decode("utf-8", errors="replace"), ext)
    return notes


def _skipped(rel: str) -> bool:
    return rel.startswith(SKIP_FOLDERS)


def _is_stub(note: Note) -> bool:
    return "merged_into" in (note.ext.nodes.get(m.note_id(note.rel), {}).get("props") or {})


def _resolved_links(notes: dict[str, Note]) -> tuple[dict[str, set[str]], dict[str, set[str]], list[dict[str, Any]]]:
    """Out-links and in-links between notes, and every dangling link as (note, line, target)."""
    from extract.notes import resolve_vault

    res = resolve_vault({rel: n.ext for rel, n in notes.items()})
    out: dict[str, set[str]] = defaultdict(set)
    into: dict[str, set[str]] = defaultdict(set)
    dangling: list[dict[str, Any]] = []
    sections = {nid: attrs.get("source") for nid, attrs in res.nodes.items() if attrs.get("kind") == m.SECTION}
    for e in res.every_edge():
        if e["relation"] not in (m.LINKS_TO, m.EMBEDS):
            continue
        owner, target = e["owner"], e["target"]
        if target.startswith("unresolved:"):
            raw = res.nodes.get(target, {}).get("label", target[len("unresolved:") :])
            dangling.append({"note": owner, "line": e.get("line"), "target": raw})
            continue
        dest = sections.get(target) or target[len("note:") :]
        if dest != owner:
            out[owner].add(dest)
            into[dest].add(owner)
    return out, into, dangling


def _merge_actions(notes: dict[str, Note], into: dict[str, set[str]], threshold: float) -> list[dict[str, Any]]:
    live = {rel: n for rel, n in notes.items() if not n.ext.quarantine and not _skipped(rel) and not _is_stub(n)}
    pairs: dict[tuple[str, str], tuple[float, str]] = {}
    by_name: dict[str, dict[str, str]] = defaultdict(dict)
    for rel, note in sorted(live.items()):
        for name in sorted({note.title, posixpath.splitext(posixpath.basename(rel))[0], *note.ext.meta.get("aliases", [])}):
            key = name_key(name)
            if key:
                by_name[key].setdefault(rel, name)
    for named in by_name.values():
        rels = sorted(named)
        for i, a in enumerate(rels):
            for b in rels[i + 1 :]:
                pairs.setdefault((a, b), (1.0, f"same name: '{named[a]}' and '{named[b]}'"))
    sets = {rel: shingles(n.body) for rel, n in live.items()}
    index: dict[int, list[str]] = defaultdict(list)
    for rel in sorted(sets):
        for sh in sets[rel]:
            index[sh].append(rel)
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for rels in index.values():
        if 1 < len(rels) <= COMMON_SHINGLE_NOTES:
            for i, a in enumerate(rels):
                for b in rels[i + 1 :]:
                    shared[(a, b)] += 1
    for (a, b), common in shared.items():
        score = common / (len(sets[a]) + len(sets[b]) - common)
        if score >= threshold and (a, b) not in pairs:
            pairs[(a, b)] = (round(score, 3), f"bodies overlap (5-word shingle Jaccard {score:.2f})")
    actions = []
    claimed: set[str] = set()
    for (a, b), (score, reason) in sorted(pairs.items(), key=lambda kv: (-kv[1][0], kv[0])):
        if a in claimed or b in claimed:
            continue  # one merge per note per plan: re-plan after applying to see the next
        keep, drop = sorted((a, b), key=lambda r: (-len(into.get(r, ())), -len(live[r].text), r))
        claimed.update((a, b))
        actions.append({"action": "merge", "keep": keep, "merge": drop, "similarity": score, "reason": reason, "hashes": {keep: live[keep].digest, drop: live[drop].digest}})
    return actions


def _first_sentence(body: str) -> str:
    for line in body.split("\n"):
        text = " ".join(line.strip().lstrip("-*>").split())
        if not text or text.startswith(("#", "|", "```", "![")):
            continue
        match = _SENTENCE_RE.match(text)
        return (match.group(1) if match else text)[:200]
    return ""


def _scope_guess(rel: str, notes: dict[str, Note], out: dict[str, set[str]]) -> str:
    """The scope tag most of the note's link targets carry, else `scope/global`."""
    counts: dict[str, int] = defaultdict(int)
    for dest in out.get(rel, ()):
        for tag in notes[dest].ext.meta.get("fm_tags", []) if dest in notes else []:
            if tag.startswith("scope/"):
                counts[tag] += 1
    return min(counts, key=lambda t: (-counts[t], t)) if counts else SCOPE_FALLBACK


def _frontmatter_actions(notes: dict[str, Note], out: dict[str, set[str]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from vault_kg.notes.lint import check_note

    actions, review = [], []
    for rel, note in sorted(notes.items()):
        problems = check_note(note.ext)
        if not problems or _skipped(rel):
            continue
        if note.ext.quarantine:
            review.append({"kind": "quarantined", "note": rel, "why": note.ext.quarantine})
            continue
        meta = note.ext.meta
        action: dict[str, Any] = {"action": "frontmatter", "note": rel, "hashes": {rel: note.digest}}
        rules = {p.rule for p in problems}
        if "frontmatter" in rules or "summary" in rules:
            summary = _first_sentence(note.body) if "frontmatter" in rules or not meta.get("summary") else " ".join(str(meta["summary"]).split())
            action["summary"] = summary or note.title
        renames = {t: f"{TOPIC_FALLBACK}/{t}" for t in meta.get("fm_tags", []) if "/" not in t}
        if renames:
            action["rename_tags"] = renames
        inline_bad = [t for t in meta.get("inline_tags", []) if "/" not in t and t not in renames]
        if inline_bad:
            review.append({"kind": "inline-tags", "note": rel, "why": f"inline tags {', '.join('#' + t for t in inline_bad)} are not namespaced; rename them in the text"})
        if "frontmatter" in rules or "scope-tag" in rules:
            action["add_tags"] = [_scope_guess(rel, notes, out)]
        if len(action) > 3:
            actions.append(action)
    return actions, review


def _stem(rel: str) -> str:
    return posixpath.splitext(posixpath.basename(rel))[0].lower()


def _link_namer(notes: dict[str, Note]) -> Any:
    """How to link a note: by its file name, or by its path when another note shares that name."""
    counts: dict[str, int] = defaultdict(int)
    for rel in notes:
        counts[_stem(rel)] += 1
    return lambda rel: posixpath.splitext(posixpath.basename(rel))[0] if counts[_stem(rel)] <= 1 else rel[:-3]


def _topic_tags(note: Note) -> set[str]:
    return {t for t in note.ext.nodes.get(m.note_id(note.rel), {}).get("tags", []) if not t.startswith(("scope/", "client/", "type/", "status/"))}


def _orphan_actions(notes: dict[str, Note], out: dict[str, set[str]], into: dict[str, set[str]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    actions, review = [], []
    link_name = _link_namer(notes)
    for rel, note in sorted(notes.items()):
        if out.get(rel) or into.get(rel) or _skipped(rel) or note.ext.quarantine or _is_stub(note):
            continue
        mine = _topic_tags(note)
        best, best_score = None, 0.0
        for other, cand in sorted(notes.items()):
            if other == rel or _skipped(other) or cand.ext.quarantine or not (out.get(other) or into.get(other)):
                continue
            theirs = _topic_tags(cand)
            score = len(mine & theirs) / len(mine | theirs) if mine & theirs else 0.0
            if score > best_score:
                best, best_score = other, score
        if best is None:
            review.append({"kind": "orphan", "note": rel, "why": "no links in or out and no note shares its topic tags; link it from a related note"})
            continue
        actions.append(
            {"action": "link", "note": best, "target": rel, "link": link_name(rel), "reason": f"orphan; shares topic tags with {best} (Jaccard {best_score:.2f})", "hashes": {best: notes[best].digest}}
        )
    return actions, review


_DIGITS_RE = re.compile(r"\d+")


def _likely(key: str, by_length: dict[int, list[str]]) -> tuple[str, float] | None:
    """The closest known name to a dangling link's name (difflib ratio), never across numbers.

    Only names of compatible length can reach the cutoff (ratio = 2·matches / total length), so
    the search looks at those only; `ADR-002` never stands in for `ADR-003`.
    """
    low = int(len(key) * LIKELY_TARGET_RATIO / (2 - LIKELY_TARGET_RATIO))
    high = int(len(key) * (2 - LIKELY_TARGET_RATIO) / LIKELY_TARGET_RATIO) + 1
    pool = [k for n in range(low, high + 1) for k in by_length.get(n, ()) if _DIGITS_RE.findall(k) == _DIGITS_RE.findall(key)]
    close = difflib.get_close_matches(key, pool, n=1, cutoff=LIKELY_TARGET_RATIO)
    return (close[0], difflib.SequenceMatcher(None, key, close[0]).ratio()) if close else None


def _relink_actions(notes: dict[str, Note], dangling: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    names: dict[str, str] = {}
    for rel, note in sorted(notes.items()):
        if note.ext.quarantine or _is_stub(note):
            continue
        for name in [note.title, posixpath.splitext(posixpath.basename(rel))[0], *note.ext.meta.get("aliases", [])]:
            names.setdefault(name_key(name), rel)
    by_length: dict[int, list[str]] = defaultdict(list)
    for key in sorted(names):
        by_length[len(key)].append(key)
    link_name = _link_namer(notes)
    guesses: dict[str, tuple[str, float] | None] = {}
    actions, review = [], []
    for d in sorted(dangling, key=lambda d: (d["note"], d["line"] or 0, d["target"])):
        key = name_key(d["target"])
        if key not in guesses:
            guesses[key] = (key, 1.0) if key in names else _likely(key, by_length)
        guess = guesses[key]
        if guess is None or d["note"] not in notes:
            review.append({"kind": "dangling", "note": d["note"], "line": d["line"], "why": f"[[{d['target']}]] has no likely target; create the note or fix the link"})
            continue
        target, ratio = names[guess[0]], guess[1]
        actions.append(
            {
                "action": "relink",
                "note": d["note"],
                "line": d["line"],
                "old": d["target"],
                "new": link_name(target),
                "reason": f"dangling; likely means {target} (name similarity {ratio:.2f})",
                "hashes": {d["note"]: notes[d["note"]].digest},
            }
        )
    return actions, review


def _h2_sections(note: Note) -> list[tuple[str, int]]:
    return [(str(text), int(line)) for level, text, line in note.ext.meta.get("headings", []) if level == 2]


def _split_actions(notes: dict[str, Note], max_lines: int, max_bytes: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    actions, review = [], []
    for rel, note in sorted(notes.items()):
        lines = note.text.count("\n") + 1
        size = len(note.text.encode("utf-8"))
        if (lines <= max_lines and size <= max_bytes) or _skipped(rel) or note.ext.quarantine:
            continue
        sections = _h2_sections(note)
        if len(sections) < MIN_SPLIT_SECTIONS:
            review.append({"kind": "oversized", "note": rel, "why": f"{lines} lines / {size} bytes without `##` sections to split by; split it by hand"})
            continue
        folder = posixpath.dirname(rel)
        planned = []
        for heading, line in sections:
            name = " ".join(re.sub(r"[\\/:*?\"<>|#^\[\]]+", " ", f"{note.title} - {heading}").split())
            to = posixpath.join(folder, f"{name}.md") if folder else f"{name}.md"
            planned.append({"heading": heading, "line": line, "to": to})
        hashes: dict[str, str | None] = {rel: note.digest}
        hashes.update({s["to"]: None for s in planned})
        actions.append({"action": "split", "note": rel, "sections": planned, "reason": f"{lines} lines / {size} bytes", "hashes": hashes})
    return actions, review


def plan(vault: Path, similarity: float = DEFAULT_SIMILARITY, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, Any]:
    """The consolidation plan for the vault as it is now (read-only)."""
    if not 0.0 < similarity <= 1.0:
        raise KgError(f"--similarity {similarity}: give a Jaccard threshold between 0 and 1, e.g. 0.6")
    vault = vault.resolve()
    notes = load_notes(vault)
    out, into, dangling = _resolved_links(notes)
    actions = _merge_actions(notes, into, similarity)
    review: list[dict[str, Any]] = []
    for found in (_frontmatter_actions(notes, out), _orphan_actions(notes, out, into), _relink_actions(notes, dangling), _split_actions(notes, max_lines, max_bytes)):
        actions += found[0]
        review += found[1]
    counts: dict[str, int] = defaultdict(int)
    for i, action in enumerate(actions, 1):
        counts[action["action"]] += 1
        action["id"] = f"{action['action']}-{counts[action['action']]}"
        actions[i - 1] = {"id": action.pop("id"), **action}
    return {PLAN_KEY: PLAN_VERSION, "vault": str(vault), "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "notes": len(notes), "actions": actions, "review": review}


def _describe(a: dict[str, Any]) -> str:
    kind = a["action"]
    if kind == "merge":
        return f"merge `{a['merge']}` into `{a['keep']}` — {a['reason']}; `{a['merge']}` becomes a stub linking to it"
    if kind == "frontmatter":
        parts = []
        if "summary" in a:
            parts.append(f'summary: "{a["summary"]}"')
        if a.get("add_tags"):
            parts.append(f"add tags {', '.join(a['add_tags'])}")
        if a.get("rename_tags"):
            parts.append("rename tags " + ", ".join(f"{k} → {v}" for k, v in a["rename_tags"].items()))
        return f"fix frontmatter of `{a['note']}`: " + "; ".join(parts)
    if kind == "link":
        return f"link orphan `{a['target']}` from `{a['note']}` (See also) — {a['reason']}"
    if kind == "relink":
        return f"in `{a['note']}` line {a['line']}: [[{a['old']}]] → [[{a['new']}]] — {a['reason']}"
    if kind == "split":
        return f"split `{a['note']}` ({a['reason']}) into " + ", ".join(f"`{s['to']}`" for s in a["sections"])
    return kind


def render_markdown(data: dict[str, Any]) -> str:
    """The plan for review: one line per action, then the JSON block `--apply` reads (edit it there)."""
    lines = [
        "# Vault consolidation plan",
        "",
        f"Vault `{data['vault']}` · {data['notes']} notes · created {data['created']}.",
        "",
        "Review the actions below. To skip one, delete it from the JSON block at the end (that block is",
        "what `kg consolidate --apply` performs, and nothing else). Undo an apply with `git revert`.",
        "",
        "## Actions",
        "",
    ]
    lines += [f"- **{a['id']}**: {_describe(a)}" for a in data["actions"]] or ["- none"]
    lines += ["", "## For review (not applied)", ""]
    lines += [f"- {r['kind']}: `{r['note']}`{':' + str(r['line']) if r.get('line') else ''} — {r['why']}" for r in data["review"]] or ["- none"]
    lines += ["", "## Plan", "", "```json", json.dumps(data, indent=2, ensure_ascii=False), "```", ""]
    return "\n".join(lines)


def read_plan(path: Path) -> dict[str, Any]:
    """A plan from a markdown file (its fenced JSON block) or a JSON file, checked for shape."""
    from vault_kg.core.safe_read import read_regular

    try:
        text = read_regular(path, MAX_PLAN_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KgError(f"{path}: cannot read the plan ({exc}); give the file written by `kg consolidate --plan`") from exc
    candidates = [text] if text.lstrip().startswith("{") else _JSON_BLOCK_RE.findall(text)
    for raw in reversed(candidates):
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise KgError(f"{path}: the plan's JSON is not valid ({exc.msg} at line {exc.lineno}); fix it or make a new plan") from exc
        if isinstance(data, dict) and data.get(PLAN_KEY) == PLAN_VERSION and isinstance(data.get("actions"), list):
            return data
    raise KgError(f'{path}: no consolidation plan found (a ```json block with "{PLAN_KEY}": {PLAN_VERSION}); make one with `kg consolidate --plan --output PLAN.md`')


# ---- applying ----------------------------------------------------------------------------------


def _fm(text: str, rel: str) -> dict[str, Any]:
    """The frontmatter mapping of a note ({} when it has none), as the graph reads it."""
    from vault_kg.notes.frontmatter_edit import read_frontmatter

    return read_frontmatter(rel, text)


def _with_frontmatter(text: str, change: Any, rel: str) -> str:
    """`text` with its frontmatter changed by `change(dict)`: only the keys it changes are rewritten."""
    from vault_kg.notes.frontmatter_edit import edit_text

    return edit_text(rel, text, change)


def _tags_of(data: dict[str, Any]) -> list[str]:
    raw = data.get("tags")
    if isinstance(raw, str):
        return [t for t in re.split(r"[,\s]+", raw) if t]
    return [str(t) for t in raw] if isinstance(raw, list) else []


def _apply_frontmatter(text: str, a: dict[str, Any]) -> str:
    def change(data: dict[str, Any]) -> None:
        if "summary" in a:
            data["summary"] = a["summary"]
        tags = [a.get("rename_tags", {}).get(t.lstrip("#"), t) for t in _tags_of(data)]
        for tag in a.get("add_tags", []):
            if tag not in tags:
                tags.append(tag)
        data.pop("tag", None)
        data["tags"] = tags

    return _with_frontmatter(text, change, a["note"])


def paragraphs(body: str) -> list[str]:
    """Blank-line-separated blocks of a body; a fenced code block stays one block."""
    blocks: list[list[str]] = [[]]
    fenced = False
    for line in body.split("\n"):
        if line.strip().startswith(("```", "~~~")):
            fenced = not fenced
        if not line.strip() and not fenced:
            if blocks[-1]:
                blocks.append([])
            continue
        blocks[-1].append(line)
    return ["\n".join(b) for b in blocks if b]


def _without_title(paragraph: str) -> str:
    """A paragraph without its `# Title` line: the text written right under the H1 stays."""
    if not paragraph.startswith("# "):
        return paragraph
    return paragraph.partition("\n")[2].strip("\n")


def _apply_merge(texts: dict[str, str], a: dict[str, Any], link: str) -> None:
    keep, drop = texts[a["keep"]], texts[a["merge"]]
    have = {" ".join(par.split()) for par in paragraphs(split_head(keep)[1])}
    extra = "\n\n".join(par for par in map(_without_title, paragraphs(split_head(drop)[1])) if par and " ".join(par.split()) not in have)
    drop_data = _fm(drop, a["merge"])
    drop_title = posixpath.splitext(posixpath.basename(a["merge"]))[0]

    def absorb(data: dict[str, Any]) -> None:
        tags = _tags_of(data)
        tags += [t for t in _tags_of(drop_data) if t not in tags]
        data["tags"] = tags
        aliases = data.get("aliases") or []
        aliases = [aliases] if isinstance(aliases, str) else list(aliases)
        for alias in [drop_data.get("aliases")] if isinstance(drop_data.get("aliases"), str) else drop_data.get("aliases") or []:
            if alias not in aliases:
                aliases.append(alias)
        if aliases:
            data["aliases"] = aliases

    merged = _with_frontmatter(keep, absorb, a["keep"]).rstrip("\n")
    if extra:
        merged += f"\n\n## Merged from [[{a['merge'][:-3]}|{drop_title}]]\n\n{extra}"
    texts[a["keep"]] = merged + "\n"

    def stub(data: dict[str, Any]) -> None:
        data["summary"] = f"Merged into {posixpath.splitext(posixpath.basename(a['keep']))[0]}; kept as a pointer so links still resolve"
        data["merged_into"] = a["keep"]

    head = _with_frontmatter(drop, stub, a["merge"])
    texts[a["merge"]] = split_head(head)[0] + f"\n# {drop_title}\n\nMerged into [[{link}]] by `kg consolidate` (the text lives there now).\n"


def h2_title(line: str) -> str | None:
    """The text of a `## ` heading line (trailing blanks and closing hashes dropped), or None.

    The same matches as `^##[ \\t]+(.+?)[ \\t#]*$`, done in code: that pattern backtracks
    quadratically on a long run of trailing blanks (1.1 s at 8,000 spaces, growing with the square).
    """
    if line.endswith("\n"):
        line = line[:-1]
    head = _H2_START_RE.match(line)
    if head is None or "\n" in line:
        return None
    rest = line[head.end() :]
    if not rest:  # only blanks after `##`: the pattern took the last blank as the text
        return head.group(1)[-1] if len(head.group(1)) > 1 else None
    return rest.rstrip(" \t#") or rest[0]


def _apply_link(text: str, a: dict[str, Any]) -> str:
    bullet = f"- [[{a['link']}]]"
    if bullet in text:
        return text
    lines = text.rstrip("\n").split("\n")
    last_h2 = max((i for i, line in enumerate(lines) if h2_title(line) is not None), default=None)
    if last_h2 is not None and (h2_title(lines[last_h2]) or "").strip().lower() == "see also":
        return "\n".join(lines) + f"\n{bullet}\n"
    return "\n".join(lines) + f"\n\n## See also\n\n{bullet}\n"


def _apply_relink(text: str, a: dict[str, Any]) -> str:
    lines = text.split("\n")
    index = (a.get("line") or 0) - 1
    pattern = re.compile(r"(!?\[\[)" + re.escape(a["old"]) + r"(?=[\]|#^])")
    if not 0 <= index < len(lines) or not pattern.search(lines[index]):
        raise KgError(f"{a['note']}: line {a.get('line')} no longer holds [[{a['old']}]]; make a new plan")
    lines[index] = pattern.sub(lambda mt: mt.group(1) + a["new"], lines[index])
    return "\n".join(lines)


def _apply_split(texts: dict[str, str], a: dict[str, Any]) -> None:
    """Move the planned `##` sections into their own notes; every other section stays in place.

    Sections are found by heading text in the note as it is now (earlier actions of the same plan
    may have moved lines), and each runs to the next `##` heading of the note.
    """
    from extract.notes import extract_note

    from vault_kg.notes.vault_write import render_note

    text = texts[a["note"]]
    lines = text.split("\n")
    h2 = [int(line) for level, _, line in extract_note(a["note"], text.encode("utf-8")).meta.get("headings", []) if level == 2]
    by_heading: dict[str, list[int]] = defaultdict(list)
    for line in h2:
        title = h2_title(lines[line - 1])
        if title is not None:
            by_heading[title.strip()].append(line)
    moved: dict[int, dict[str, Any]] = {}
    for s in a["sections"]:
        found = by_heading.get(s["heading"].strip())
        if not found:
            raise KgError(f"{a['note']}: no `## {s['heading']}` heading any more; make a new plan")
        moved[found.pop(0)] = s
    data = _fm(text, a["note"])
    parent = posixpath.splitext(posixpath.basename(a["note"]))[0]
    kept: list[str] = []
    i = 0
    while i < len(lines):
        number = i + 1
        if number not in moved:
            kept.append(lines[i])
            i += 1
            continue
        s = moved[number]
        end = next((x for x in h2 if x > number), len(lines) + 1) - 1
        section = "\n".join(lines[number:end]).strip("\n")
        name = posixpath.splitext(posixpath.basename(s["to"]))[0]
        first = _first_sentence(section)
        summary = f"{parent} › {s['heading']}" + (f": {first}" if first else "")
        body = f"# {name}\n\n{section}\n\nSplit from [[{a['note'][:-3]}|{parent}]]."
        texts[s["to"]] = render_note(summary, _tags_of(data), body, {"split_from": a["note"]})
        kept += [lines[i], "", f"Moved to [[{s['to'][:-3]}|{name}]].", ""]
        i = end
    texts[a["note"]] = "\n".join(kept).rstrip("\n") + "\n"


def _current(vault: Path, rel: str) -> str | None:
    from vault_kg.notes.vault_write import read_current

    try:  # bytes, not read_text: universal newlines would turn CRLF notes into LF ones (and break the plan's hashes)
        return read_current(vault, rel)
    except KgError as exc:
        raise KgError(f"{exc}; fix the note and make a new plan") from exc


def _passes_contract(rel: str, text: str) -> bool:
    from extract.notes import extract_note

    from vault_kg.notes.lint import check_note

    return not check_note(extract_note(rel, text.encode("utf-8")))


def apply(vault: Path, plan_path: Path, commit: bool = True) -> dict[str, Any]:
    """Perform exactly the plan's actions, all or nothing, then one git commit (when a repository)."""
    from vault_kg.core.safe_write import locked
    from vault_kg.core.vault_guard import safe_relpath
    from vault_kg.notes import gitops
    from vault_kg.notes.vault_write import prepare_note, write_note

    vault = vault.resolve()
    data = read_plan(plan_path)
    if Path(data.get("vault", "")).resolve() != vault:
        raise KgError(f"{plan_path}: the plan is for {data.get('vault')}, not {vault}; make a new plan for this vault")
    actions = data["actions"]
    originals: dict[str, str | None] = {}
    for a in actions:
        if not isinstance(a, dict) or a.get("action") not in {"merge", "frontmatter", "link", "relink", "split"}:
            raise KgError(f"{plan_path}: unknown action {a!r}; remove it from the plan")
        for rel, digest in (a.get("hashes") or {}).items():
            if rel not in originals:
                originals[rel] = _current(vault, rel)
            now = originals[rel]
            if (digest is None and now is not None) or (digest is not None and (now is None or sha256(now) != digest)):
                raise KgError(f"{vault / rel}: changed since the plan was made ({a['id']}); nothing applied; make a new plan with `kg consolidate --plan`")
    texts: dict[str, str] = {rel: t for rel, t in originals.items() if t is not None}
    for a in actions:
        kind = a["action"]
        try:
            if kind == "frontmatter":
                texts[a["note"]] = _apply_frontmatter(texts[a["note"]], a)
            elif kind == "merge":
                _apply_merge(texts, a, a["keep"][:-3])
            elif kind == "link":
                texts[a["note"]] = _apply_link(texts[a["note"]], a)
            elif kind == "relink":
                texts[a["note"]] = _apply_relink(texts[a["note"]], a)
            elif kind == "split":
                _apply_split(texts, a)
        except KeyError as exc:
            raise KgError(f"{plan_path}: action {a.get('id')} names {exc} without its hash; make a new plan") from exc
    changed = sorted(rel for rel, text in texts.items() if text != originals.get(rel))
    contract = {rel: originals.get(rel) is None or _passes_contract(rel, originals[rel] or "") for rel in changed}
    repo = gitops.open_repo(vault) if commit and gitops.is_repo(vault) else None
    with locked(vault, [safe_relpath(vault, rel) for rel in changed]):
        for rel in changed:
            prepare_note(vault, rel, texts[rel], create=originals.get(rel) is None, contract=contract[rel], promotion=True)
        if repo is not None and changed:
            dirty = [rel for _, rel in gitops.status_entries(repo) if rel in set(changed)]
            if dirty:
                raise KgError(f"{vault / dirty[0]}: has uncommitted edits; commit them first so the apply stays revertable on its own")
        for rel in changed:
            before = originals.get(rel)
            write_note(vault, rel, texts[rel], based_on=before, create=before is None, contract=contract[rel], promotion=True)
    sha = _commit(repo, changed, plan_path, actions) if repo is not None and changed else None
    return {"vault": str(vault), "applied": [a["id"] for a in actions], "files": changed, "commit": sha}


def _commit(repo: Any, changed: list[str], plan_path: Path, actions: list[dict[str, Any]]) -> str | None:
    from vault_kg.notes.gitops import head, identity_missing, last_line

    paths = [repo.top_rel(rel) for rel in changed]
    repo.git("add", "--", *[str(repo.vault / rel) for rel in changed])
    from vault_kg.core.secrets import redact

    lines = [f"{a['id']}: {_describe(a)}" for a in actions]
    title = redact(f"kg consolidate: {len(actions)} action(s) from {plan_path.name}")
    proc = repo.git("commit", "-q", "--no-verify", "-m", title, "-m", redact("\n".join(lines)), "--", *[str(repo.vault / rel) for rel in changed], check=False)
    if proc.returncode != 0:
        hint = "set a git identity (`git config --global user.name/user.email`)" if identity_missing(proc) else last_line(proc)
        raise KgError(f"{repo.vault}: the edits are written but not committed ({hint}); commit them with `git commit -- {' '.join(paths)}`")
    return head(repo)


def format_plan_summary(data: dict[str, Any], written: Path | None) -> str:
    counts: dict[str, int] = defaultdict(int)
    for a in data["actions"]:
        counts[a["action"]] += 1
    parts = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no actions"
    where = f"; wrote {written} — review it, then `kg consolidate --apply {written}`" if written else ""
    return f"{len(data['actions'])} action(s) ({parts}), {len(data['review'])} item(s) for review{where}"


def format_applied(d: dict[str, Any]) -> str:
    return f"applied {len(d['applied'])} action(s) to {len(d['files'])} note(s)" + (f"; commit {d['commit'][:10]} (undo: git revert {d['commit'][:10]})" if d["commit"] else "")
