"""Shared by the robustness suites: a generated vault + code repo, its edits, and canonical artifacts.

The generators are plain functions of a `random.Random` (or of hypothesis draws passed in as
parameters), so a shrunk hypothesis counterexample can be replayed as a fixed list of steps.
`canonical(out)` is what "incremental equals from scratch" compares: graph.json minus
`graph.root`, the report, and the query tables of the cache (nodes, edges, full-text docs).
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from vault_kg.update.engine import run
from vault_kg.core.scopes import Scope

NAMES = ["Alpha", "Beta", "Gamma", "Delta", "Omega", "2025-03-14"]  # the last one is a journal day under journal/
FOLDERS = ["", "proj/", "area/sub/", "journal/"]
DANGLING = ["Nowhere", "Later Note", "Ghost"]
HEADINGS = ["Intro", "Details", "Open questions"]
TAGS = ["topic/x", "topic/x/y", "tool/semrush", "client/acme", "scope/global", "a/b/c/d"]
ALIASES = ["Nowhere", "AL", "Ghost", "Beta", "Other"]
MODULES = ["pkg/core.py", "pkg/util.py", "pkg/sub/deep.py", "app.py"]
FUNCS = ["run", "helper", "fetch", "parse"]
CLASSES = ["Client", "Base", "Worker"]

BROKEN_YAML = "---\nsummary: [unclosed\ntags: {\n---\n# Broken\n[[Alpha]]\n"
BROKEN_PY = "def broken(:\n    return [\n"


def module_name(relpath: str) -> str:
    return relpath[:-3].replace("/", ".")


def note_text(rng: random.Random) -> str:
    """A note with optional frontmatter (summary, nested tags, aliases, title) and a linked body."""
    lines: list[str] = []
    if rng.random() < 0.8:
        lines.append("---")
        if rng.random() < 0.8:
            lines.append(f"summary: {rng.choice(['Retries', 'Billing flow', 'How we deploy', 'An odd: note'])!r}")
        tags = rng.sample(TAGS, rng.randint(0, 3))
        if tags:
            lines.append("tags: [" + ", ".join(tags) + "]")
        aliases = rng.sample(ALIASES, rng.randint(0, 2))
        if aliases:
            lines.append("aliases:")
            lines += [f"  - {a}" for a in aliases]
        if rng.random() < 0.2:
            lines.append(f"title: {rng.choice(NAMES)} title")
        if rng.random() < 0.3:
            lines += anchor_lines(rng)
        if rng.random() < 0.2:  # a relation the structure states (extract/stated_relations.py)
            lines.append(f'owner: "[[{rng.choice(NAMES + DANGLING + ALIASES)}]]"')
        lines.append("---")
    if rng.random() < 0.5:
        lines.append(f"# {rng.choice(NAMES)} heading")
    for heading in rng.sample(HEADINGS, rng.randint(0, 3)):
        lines.append(f"## {heading}")
        lines.append(body_line(rng))
    for _ in range(rng.randint(0, 3)):
        lines.append(body_line(rng))
    if rng.random() < 0.3:
        lines += ["## Depends on", *(f"- {link(rng)}" for _ in range(rng.randint(1, 2)))]
    return "\n".join(lines) + "\n"


def anchor_lines(rng: random.Random) -> list[str]:
    """An `anchors:` list: to a code symbol of project `proj` (a hash that may or may not match) or to a note."""
    if rng.random() < 0.3:
        return ["anchors:", f'  - note: "[[{rng.choice(NAMES)}]]"']
    module = rng.choice(MODULES)
    symbol = rng.choice([f"function {rng.choice(FUNCS)}", f"class {rng.choice(CLASSES)}"])
    digest = rng.choice(["0" * 64, "ab" * 32])
    return ["anchors:", "  - project: proj", f'    locator: "{module} › {symbol}"', f"    hash: {digest}"]


def link(rng: random.Random) -> str:
    target = rng.choice(NAMES + DANGLING + [f"proj/{rng.choice(NAMES)}", "area/sub/Gamma"])
    form = rng.randrange(6)
    if form == 0:
        return f"[[{target}#{rng.choice(HEADINGS)}]]"
    if form == 1:
        return f"[[{target}|shown text]]"
    if form == 2:
        return f"![[{target}]]"
    if form == 3:
        return f"[md link]({target.replace(' ', '%20')}.md)"
    return f"[[{target}]]"


def body_line(rng: random.Random) -> str:
    parts = [rng.choice(["Text about", "See", "We use", "Related:"])]
    for _ in range(rng.randint(0, 3)):
        parts.append(link(rng) if rng.random() < 0.7 else f"#{rng.choice(TAGS)}")
    return " ".join(parts)


def code_text(rng: random.Random, relpath: str) -> str:
    """A Python module importing and calling its siblings, with classes, methods and inheritance."""
    others = [m for m in MODULES if m != relpath]
    lines = [f'"""Module {module_name(relpath)}."""']
    imported: list[str] = []
    for other in rng.sample(others, rng.randint(0, 2)):
        name = rng.choice(FUNCS + CLASSES)
        if rng.random() < 0.5:
            lines.append(f"from {module_name(other)} import {name}")
            imported.append(name)
        else:
            lines.append(f"import {module_name(other)}")
            imported.append(f"{module_name(other)}.{name}")
    if rng.random() < 0.3:
        lines.append("import os")
        imported.append("os.getcwd")
    lines.append("")
    defined: list[str] = []
    for name in rng.sample(FUNCS, rng.randint(0, 3)):
        callee = rng.choice(imported + defined + ["print", "missing_fn"])
        lines += [f"def {name}(x):", f'    """Doc of {name}."""', f"    return {callee}(x)", ""]
        defined.append(name)
    for name in rng.sample(CLASSES, rng.randint(0, 2)):
        bases = [b for b in imported if b.split(".")[-1] in CLASSES][:1]
        lines.append(f"class {name}({bases[0]}):" if bases else f"class {name}:")
        for method in rng.sample(FUNCS, rng.randint(1, 2)):
            callee = rng.choice(["self.run", "self.helper", *(imported or ["len"])])
            lines += [f"    def {method}(self):", f"        return {callee}()"]
        lines.append("")
        defined.append(name)
    return "\n".join(lines) + "\n"


@dataclass
class World:
    """The files of a vault and a repo as the test believes them to be, plus a trash for restores."""

    vault: Path
    repo: Path
    trash: dict[str, bytes] = field(default_factory=dict)

    def path(self, rel: str) -> Path:
        return (self.repo if rel.startswith("code:") else self.vault) / rel.split(":", 1)[1]

    def files(self, side: str) -> list[str]:
        root = self.vault if side == "vault" else self.repo
        suffix = ".md" if side == "vault" else ".py"
        return sorted(f"{side}:{p.relative_to(root).as_posix()}" for p in root.rglob(f"*{suffix}") if "kg-out" not in p.parts)

    def write(self, rel: str, text: str | bytes) -> Path:
        path = self.path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        return path


def seed_world(world: World, rng: random.Random, notes: int = 6) -> None:
    used: set[str] = set()
    for _ in range(notes):
        rel = f"vault:{rng.choice(FOLDERS)}{rng.choice(NAMES)}.md"
        if rel not in used:
            used.add(rel)
            world.write(rel, note_text(rng))
    for relpath in MODULES[: rng.randint(2, len(MODULES))]:
        world.write(f"code:{relpath}", code_text(rng, relpath))


OPS = ("create", "edit_body", "edit_frontmatter", "rename", "move", "delete", "restore", "alias_resolves", "break", "fix")


def apply_op(world: World, op: str, side: str, rng: random.Random) -> list[Path]:
    """Apply one operation; return the paths it touched (what a hook would pass to `kg update`)."""
    if op in EXTRA_OPS:
        return EXTRA_OPS[op](world, op, rng)
    existing = world.files(side)
    if side == "code":
        return _apply_code(world, op, existing, rng)
    if op == "create" or not existing:
        rel = f"vault:{rng.choice(FOLDERS)}{rng.choice(NAMES + DANGLING)}.md"
        return [world.write(rel, note_text(rng))]
    rel = rng.choice(existing)
    path = world.path(rel)
    if op == "edit_body":
        text = path.read_text(encoding="utf-8", errors="replace")
        return [world.write(rel, text + body_line(rng) + "\n")]
    if op == "edit_frontmatter":
        text = path.read_text(encoding="utf-8", errors="replace")
        body = text.split("\n---\n", 1)[1] if text.startswith("---\n") and "\n---\n" in text else text
        fm = note_text(rng).split("\n---\n", 1)[0] if rng.random() < 0.9 else "---\nsummary: only fm"
        if not fm.startswith("---"):
            fm = "---\nsummary: x"
        return [world.write(rel, fm + "\n---\n" + body)]
    if op in ("rename", "move"):
        folder = rel.split(":", 1)[1].rpartition("/")[0]
        name = rel.rsplit("/", 1)[-1]
        if op == "rename":
            new = f"vault:{folder + '/' if folder else ''}{rng.choice(NAMES + DANGLING)}.md"
        else:
            new = f"vault:{rng.choice(FOLDERS)}{name.split(':')[-1]}"
        if new == rel or new in existing:
            return []
        target = world.path(new)
        target.parent.mkdir(parents=True, exist_ok=True)
        path.rename(target)
        return [path, target]
    if op == "delete":
        world.trash[rel] = path.read_bytes()
        path.unlink()
        return [path]
    if op == "restore":
        if not world.trash:
            return []
        back = rng.choice(sorted(world.trash))
        return [world.write(back, world.trash.pop(back))]
    if op == "alias_resolves":
        target = rng.choice(DANGLING)
        text = path.read_text(encoding="utf-8", errors="replace")
        body = text.split("\n---\n", 1)[1] if text.startswith("---\n") and "\n---\n" in text else text
        return [world.write(rel, f"---\nsummary: now answers to {target}\naliases: [{target}]\n---\n{body}")]
    if op == "break":
        world.trash.setdefault(rel, path.read_bytes())
        return [world.write(rel, BROKEN_YAML if rng.random() < 0.7 else b"bad \xff\xfe utf8\n")]
    if op == "fix":
        return [world.write(rel, note_text(rng))]
    raise ValueError(op)


def _apply_code(world: World, op: str, existing: list[str], rng: random.Random) -> list[Path]:
    if op in ("create", "restore") or not existing:
        relpath = rng.choice(MODULES)
        back = world.trash.pop(f"code:{relpath}", None)
        return [world.write(f"code:{relpath}", back if back is not None and op == "restore" else code_text(rng, relpath))]
    rel = rng.choice(existing)
    path = world.path(rel)
    relpath = rel.split(":", 1)[1]
    if op in ("edit_body", "edit_frontmatter", "alias_resolves", "fix"):
        return [world.write(rel, code_text(rng, relpath) if op != "edit_frontmatter" else path.read_text() + "# a comment only\n")]
    if op in ("rename", "move"):
        new = rng.choice(MODULES)
        if f"code:{new}" in existing:
            return []
        target = world.path(f"code:{new}")
        target.parent.mkdir(parents=True, exist_ok=True)
        path.rename(target)
        return [path, target]
    if op == "delete":
        world.trash[rel] = path.read_bytes()
        path.unlink()
        return [path]
    if op == "break":
        return [world.write(rel, path.read_text() + BROKEN_PY)]
    raise ValueError(op)


# ---------------------------------------------------------------- canonical artifacts


def canonical(out: Path) -> dict[str, Any]:
    """What must be identical between an incrementally updated scope and a fresh build."""
    graph = orjson.loads((out / "graph.json").read_bytes())
    graph["graph"].pop("root", None)
    brief = orjson.loads((out / "brief.json").read_bytes())
    brief.pop("root", None)
    con = sqlite3.connect(f"file:{out / 'cache' / 'index.sqlite'}?mode=ro", uri=True)
    try:
        tables = {
            "nodes": sorted(con.execute("SELECT id, kind, label_lc, source, status, rank, community, data FROM nodes")),
            "edges": sorted(con.execute("SELECT owner, source, target, relation, data FROM edges")),
            "docs": sorted(con.execute("SELECT node_id, owner, label, aliases, summary, body FROM docs")),
        }
    finally:
        con.close()
    return {"graph": graph, "report": (out / "GRAPH_REPORT.md").read_text(), "brief": brief, "tables": tables}


def fresh_build(scope: Scope, out: Path) -> dict[str, Any]:
    """A from-scratch build of the same files into a separate, empty output folder."""
    shutil.rmtree(out, ignore_errors=True)
    run(Scope(scope.name, scope.kind, scope.root, out.resolve()), force=True)
    return canonical(out)


def first_difference(a: Any, b: Any, where: str = "") -> str:
    """A short description of where two canonical structures differ (for assertion messages)."""
    if type(a) is not type(b):
        return f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{where}.{key}: only in {'incremental' if key in a else 'fresh'}"
            if a[key] != b[key]:
                return first_difference(a[key], b[key], f"{where}.{key}")
    if isinstance(a, (list, tuple)):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, f"{where}[{i}]")
        if len(a) != len(b):
            extra = a[len(b) :] if len(a) > len(b) else b[len(a) :]
            return f"{where}: lengths {len(a)} != {len(b)}; extra {str(extra[:2])[:400]}"
    return f"{where}: {str(a)[:300]!r} != {str(b)[:300]!r}"


# ---------------------------------------------------------------- link-rich notes (for the link oracle)

LINK_NAMES = NAMES + ["alpha", "BETA", "gamma.md", "Later Note", "proj/Alpha", "area/sub/Gamma", "sub/Gamma", "Nowhere"]
HEADING_FORMS = ["Intro", "intro", "Details", "Open Questions", "Missing heading"]


def rich_link(rng: random.Random) -> str:
    """Every link form Obsidian knows, with case, path and folder variations (see wikilink_oracle)."""
    target = rng.choice(LINK_NAMES)
    heading = rng.choice(HEADING_FORMS)
    file = target if target.lower().endswith(".md") else f"{target}.md"
    forms = [
        f"[[{target}]]",
        f"[[{target}|shown]]",
        f"[[{target}#{heading}]]",
        f"[[{target}#^blk-1]]",
        f"[[{target}^blk-1]]",
        f"![[{target}]]",
        f"![[{target}#{heading}]]",
        f"[[#{heading}]]",
        f"[[{target}#{heading}|x]]",
        f"[text]({file.replace(' ', '%20')})",
        f"[text](../{file.replace(' ', '%20')})",
        f"[text](./{file.replace(' ', '%20')}#{heading.replace(' ', '%20')})",
        f"`[[{target}]]`",  # inline code: not a link
    ]
    return rng.choice(forms)


def rich_note_text(rng: random.Random) -> str:
    """A note whose body holds links in prose, lists, a table (escaped pipes) and a code fence."""
    lines: list[str] = []
    if rng.random() < 0.85:
        aliases = rng.sample(ALIASES + ["alpha", "Later note", "GHOST"], rng.randint(0, 2))
        lines += ["---", f"summary: {rng.choice(['Links', 'A table of links'])}"]
        lines += ["aliases:", *[f"  - {a}" for a in aliases]] if aliases else []
        lines.append("---")
    for heading in rng.sample(HEADINGS, rng.randint(0, 3)):
        lines.append(f"## {heading}" + (" ##" if rng.random() < 0.2 else ""))
        lines.append(" ".join(rich_link(rng) for _ in range(rng.randint(0, 3))) + (" ^blk-1" if rng.random() < 0.2 else ""))
    if rng.random() < 0.5:
        lines += ["", "| what | where |", "| --- | --- |"]
        for _ in range(rng.randint(1, 3)):
            target = rng.choice(LINK_NAMES)
            lines.append(f"| [[{target}\\|{target} label]] | [[{target}#{rng.choice(HEADING_FORMS)}\\|x]] |")
    if rng.random() < 0.4:
        lines += ["```markdown", f"[[{rng.choice(LINK_NAMES)}]] is not a link in a fence", "```"]
    for _ in range(rng.randint(0, 3)):
        lines.append("- " + " ".join(rich_link(rng) for _ in range(rng.randint(1, 2))))
    return "\n".join(lines) + "\n"


LINK_OPS = ("rich_create", "rich_rewrite")


def apply_link_op(world: World, op: str, rng: random.Random) -> list[Path]:
    """Write a link-rich note: a new one (maybe a same-named note in another folder) or over an existing one."""
    existing = world.files("vault")
    if op == "rich_rewrite" and existing:
        rel = rng.choice(existing)
    else:
        rel = f"vault:{rng.choice(FOLDERS + ['sub/'])}{rng.choice(NAMES + DANGLING)}.md"
    return [world.write(rel, rich_note_text(rng))]


# ---------------------------------------------------------------- other languages in the code scope

POLYGLOT = {
    "web/util.ts": lambda rng: 'export function helper(x: number): number {\n  return x + %d;\n}\n\nexport class Base {\n  name(): string { return "base"; }\n}\n' % rng.randrange(10),
    "web/app.ts": lambda rng: (
        'import { helper, Base } from "./util";\nimport * as legacy from "./legacy";\n\n'
        'export class Client extends Base {\n  fetch(): number {\n    return helper(%d) + legacy.parse("x");\n  }\n}\n\n'
        "export function run(): number {\n  return new Client().fetch()%s;\n}\n" % (rng.randrange(10), rng.choice(["", " + missing()"]))
    ),
    "web/legacy.js": lambda rng: 'const { helper } = require("./util");\n\nfunction parse(s) {\n  return helper(s.length * %d);\n}\n\nmodule.exports = { parse };\n' % rng.randrange(1, 9),
    "go.mod": lambda rng: "module example.com/proj\n\ngo 1.22\n",
    "svc/server.go": lambda rng: (
        'package svc\n\nimport "example.com/proj/svc/store"\n\n// Server serves.\ntype Server struct{ name string }\n\n'
        "// Run starts it.\nfunc (s *Server) Run() int {\n\treturn store.Get(%d) + s.stop()\n}\n\n"
        "func (s *Server) stop() int { return helper() }\n" % rng.randrange(10)
    ),
    "svc/helper.go": lambda rng: "package svc\n\nfunc helper() int {\n\treturn %d\n}\n" % rng.randrange(10),
    "svc/store/store.go": lambda rng: "package store\n\n// Get reads a value.\nfunc Get(k int) int {\n\treturn k * %d\n}\n" % rng.randrange(1, 9),
    "rs/lib.rs": lambda rng: "mod shapes;\n\nuse crate::shapes::area;\n\n/// Runs everything.\npub fn run() -> i32 {\n    area(%d)%s\n}\n" % (rng.randrange(10), rng.choice(["", " + unknown_fn()"])),
    "rs/shapes.rs": lambda rng: (
        "pub trait Shape {\n    fn size(&self) -> i32;\n}\n\npub struct Circle;\n\n"
        "impl Shape for Circle {\n    fn size(&self) -> i32 {\n        %d\n    }\n}\n\n"
        "pub fn area(x: i32) -> i32 {\n    Circle.size() * x\n}\n" % rng.randrange(10)
    ),
}
POLYGLOT_BROKEN = {".ts": "export function broken( {\n", ".js": "function (\n", ".go": "func broken( {\n", ".rs": "fn broken( {\n", ".mod": "module\n"}
POLYGLOT_OPS = ("poly_write", "poly_edit", "poly_rename", "poly_delete", "poly_break")


def apply_polyglot_op(world: World, op: str, rng: random.Random) -> list[Path]:
    """TypeScript, JavaScript, Go (with go.mod) and Rust files in the code scope, edited like the Python ones."""
    present = sorted(rel for rel in POLYGLOT if (world.repo / rel).exists())
    if op == "poly_write" or not present:
        rel = rng.choice(sorted(POLYGLOT))
        return [world.write(f"code:{rel}", POLYGLOT[rel](rng))]
    rel = rng.choice(present)
    path = world.repo / rel
    if op == "poly_edit":
        return [world.write(f"code:{rel}", POLYGLOT[rel](rng))]
    if op == "poly_rename":
        target = path.with_name("moved_" + path.name)
        path.rename(target)
        return [path, target]
    if op == "poly_delete":
        path.unlink()
        return [path]
    if op == "poly_break":
        return [world.write(f"code:{rel}", path.read_text() + POLYGLOT_BROKEN[path.suffix])]
    raise ValueError(op)


# ---------------------------------------------------------------- anchors that really match, then go stale

ANCHOR_OPS = ("anchor_real", "edit_anchored")


def apply_anchor_op(world: World, op: str, rng: random.Random) -> list[Path]:
    """`anchor_real`: a note anchored to a symbol of the repo with its real hash (the note is live).
    `edit_anchored`: change the body of a symbol some note is anchored to (the note goes stale)."""
    from extract.code import symbols_of

    symbols = [
        (rel, locator, info)
        for rel in sorted(p.relative_to(world.repo).as_posix() for p in world.repo.rglob("*") if p.is_file() and ".git" not in p.parts and "kg-out" not in p.parts)
        for locator, info in sorted(symbols_of(rel, (world.repo / rel).read_bytes()).items())
    ]
    if op == "anchor_real":
        if not symbols:
            return []
        rel, locator, info = rng.choice(symbols)
        note = f"vault:{rng.choice(FOLDERS)}Anchored {rng.randrange(3)}.md"
        text = f'---\nsummary: Describes {info["name"]}\nanchors:\n  - project: proj\n    locator: "{locator}"\n    hash: {info["hash"]}\n---\n# About {info["name"]}\nSee [[{rng.choice(NAMES)}]].\n'
        return [world.write(note, text)]
    if op == "edit_anchored":
        anchored = anchored_locators(world)
        spans = [
            (rel, locator, info) for rel, locator, info in symbols if locator in anchored and info["end_line"] > info["line"] and locator.rsplit(" › ", 1)[-1].startswith(("function ", "method "))
        ]
        if not spans:
            return []
        rel, locator, info = rng.choice(spans)
        lines = (world.repo / rel).read_text().split("\n")
        last = lines[info["end_line"] - 1]
        indent = last[: len(last) - len(last.lstrip())]
        if rel.endswith(".py"):
            statement = indent + "_edited = 1"
        else:  # the line before a closing brace: one level deeper than the brace
            statement = indent + "    edited();"
        lines[info["end_line"] - 1] = last + "  "  # trailing whitespace alone never dirties an anchor
        lines.insert(info["end_line"] - 1, statement)  # a new statement inside the span does
        return [world.write(f"code:{rel}", "\n".join(lines))]
    raise ValueError(op)


def anchored_locators(world: World) -> dict[str, list[tuple[str, Any]]]:
    """locator → (vault note, hash as its YAML reads) for every code anchor into `proj`."""
    import yaml

    out: dict[str, list[tuple[str, Any]]] = {}
    for rel in world.files("vault"):
        text = world.path(rel).read_text(encoding="utf-8", errors="replace")
        if not text.startswith("---\n") or "\n---\n" not in text:
            continue
        try:
            meta = yaml.safe_load(text[4 : text.index("\n---\n")])
        except yaml.YAMLError:
            continue
        anchors = meta.get("anchors") if isinstance(meta, dict) else None
        for anchor in anchors if isinstance(anchors, list) else []:
            if isinstance(anchor, dict) and anchor.get("project") == "proj" and anchor.get("locator"):
                out.setdefault(str(anchor["locator"]), []).append((rel.split(":", 1)[1], anchor.get("hash")))
    return out


EXTRA_OPS = {
    **{op: apply_link_op for op in LINK_OPS},
    **{op: apply_polyglot_op for op in POLYGLOT_OPS},
    **{op: apply_anchor_op for op in ANCHOR_OPS},
}
SIDE_OF = {**{op: "vault" for op in LINK_OPS}, **{op: "code" for op in POLYGLOT_OPS}, "anchor_real": "vault", "edit_anchored": "code"}
