"""The library's front door: every `kg` verb as one function that returns plain data.

    from vault_kg import api
    answer = api.query("how do we retry failed webhooks", vault="~/vault")
    print(api.render("query", answer))

Each function resolves its scope the way the CLI does (`vault=` like `--vault`, `scope=` like
`--scope`; by default the project enclosing the current directory, else the vault), calls the
library function the CLI command and the MCP tool of the same name call, and returns its data
(dicts and lists that `json.dumps` accepts). `render(verb, data)` gives the CLI's text for it.
Failures a user can cause raise `vault_kg.core.errors.KgError` with one line saying what to do.
Nothing heavy is imported until a verb is called.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from vault_kg.core.scopes import Scope

__all__ = [
    "PathLike",
    "affected",
    "anchor",
    "brief",
    "cache_problem",
    "check",
    "credit_turn",
    "decide_write",
    "doctor",
    "explain",
    "format_run",
    "god_nodes",
    "index_note_later",
    "is_built",
    "journal_session",
    "lint",
    "model_notice",
    "neighbors",
    "notes_dirtied",
    "one_line",
    "open_view",
    "path",
    "probe_noop",
    "problems_of",
    "push_recall",
    "query",
    "rebuild_in_background",
    "recall",
    "recall_result",
    "recall_with_text",
    "record_brief",
    "refresh_in_background",
    "remember",
    "render",
    "renderer",
    "renderers",
    "reset_push_recall",
    "session_brief",
    "stats",
    "update",
    "update_runs",
    "write_target",
]

PathLike = str | Path


def _vault(vault: PathLike | None) -> Scope:
    from vault_kg.core.scopes import vault_scope

    return vault_scope(Path(vault).expanduser() if vault is not None else None)


def _scopes(scope: str | list[str] | None, vault: PathLike | None) -> list[Scope]:
    from vault_kg.core.scopes import resolve_scopes

    names = [scope] if isinstance(scope, str) else scope
    return resolve_scopes(names, Path(vault).expanduser() if vault is not None else None)


def _view(scope: str | list[str] | None, vault: PathLike | None) -> Any:
    return open_view(scope, vault)


def open_view(scope: str | list[str] | None = None, vault: PathLike | None = None) -> Any:
    """A read-only view of one scope's built graph (`vault_kg.query.graph_view.GraphView`), for
    the verbs below (`view=`); a face that answers many calls keeps views open (the MCP server)."""
    from vault_kg.core.errors import KgError
    from vault_kg.query.graph_view import load_view

    scopes = _scopes(scope, vault)
    if len(scopes) != 1:
        raise KgError("this command works on one scope at a time; pass a single --scope")
    return load_view(scopes[0])


def update(scope: str | list[str] | None = None, vault: PathLike | None = None, paths: list[PathLike] | None = None, force: bool = False) -> list[dict[str, Any]]:
    """Bring the graphs up to date (only `paths` when given); one run summary per scope."""
    return [r.as_dict() for r in update_runs(_scopes(scope, vault), paths, force)]


def update_runs(
    scopes: list[Scope],
    paths: list[PathLike] | None = None,
    force: bool = False,
    *,
    progress: Any = None,
    explicit: bool = False,
    long_lived: bool = False,
    hook: bool = False,
    cfg: Any = None,
    wake_model: bool = True,
    draw_html: bool | None = None,
) -> list[Any]:
    """`update` for the faces, with their options: each scope updated and its jobs woken, the
    engine's `RunResult` of each (`progress`: a bar; `explicit`: `kg build`; `long_lived`: the MCP
    server or the watcher starts the model worker at once; `hook`: the PostToolUse hook leaves the
    whole-graph work to the jobs; `draw_html`: graph.html drawn by this run, by default unless
    `hook` or `long_lived`: the page is drawn when someone looks)."""
    from vault_kg.jobs.scope_update import update_scope

    named = [Path(p) for p in paths] if paths else None
    return [update_scope(s, named, force, long_lived=long_lived, cfg=cfg, defer_communities=hook, progress=progress, explicit=explicit, wake_model=wake_model, draw_html=draw_html) for s in scopes]


def query(
    question: str,
    scope: str | list[str] | None = None,
    vault: PathLike | None = None,
    budget: int = 1500,
    depth: int = 2,
    include_stale: bool = False,
    *,
    as_of: str | None = None,
    filters: Any = None,
    scopes: list[Scope] | None = None,
    views: list[Any] | None = None,
    record_as: str | None = None,
) -> dict[str, Any]:
    """The compact, citable answer to `question` (`scopes`/`views`: already resolved or opened).
    `record_as` (the faces: "query", "mcp-query") notes the vault notes among the hits in this
    machine's recall log (`kg ledger`)."""
    from vault_kg.query import verbs as q

    chosen = scopes if scopes is not None else _scopes(scope, vault)
    answer = q.query(chosen, question, budget, include_stale, depth, as_of=as_of, filters=filters, views=views)
    if record_as:
        _record_hits(chosen, answer, record_as, question)
    return answer


def explain(
    name: str,
    scope: str | None = None,
    vault: PathLike | None = None,
    include_stale: bool = False,
    *,
    as_of: str | None = None,
    view: Any = None,
    record_as: str | None = None,
) -> dict[str, Any]:
    """A node, its attributes, its source lines and its neighbours (`record_as`: as for `query`)."""
    from vault_kg.query import verbs as q

    view = view if view is not None else _view(scope, vault)
    answer = q.explain(view, name, include_stale, as_of)
    if record_as:
        _record_hits([view.scope], answer, record_as, name)
    return answer


def _record_hits(scopes: list[Scope], answer: dict[str, Any], via: str, asked: str) -> None:
    from vault_kg.memory.recall_log import record_hits

    record_hits(scopes, answer, via, asked)


def neighbors(
    name: str,
    scope: str | None = None,
    vault: PathLike | None = None,
    relation: str | None = None,
    direction: str = "both",
    limit: int = 50,
    include_stale: bool = False,
    *,
    view: Any = None,
) -> dict[str, Any]:
    from vault_kg.query import verbs as q

    return q.neighbors(view if view is not None else _view(scope, vault), name, relation, direction, limit, include_stale)


def path(a: str, b: str, scope: str | None = None, vault: PathLike | None = None, include_stale: bool = False, *, view: Any = None) -> dict[str, Any]:
    from vault_kg.query import verbs as q

    return q.path(view if view is not None else _view(scope, vault), a, b, include_stale)


def god_nodes(scope: str | None = None, vault: PathLike | None = None, n: int = 10, include_stale: bool = False, *, view: Any = None) -> list[dict[str, Any]]:
    from vault_kg.query import verbs as q

    return q.god_nodes(view if view is not None else _view(scope, vault), n, include_stale)


def affected(
    symbol: str,
    scope: str | None = None,
    vault: PathLike | None = None,
    depth: int = 3,
    include_stale: bool = False,
    *,
    view: Any = None,
    budget: int | None = None,
) -> dict[str, Any]:
    """What depends on `symbol`: anchored notes first (on a code scope, the notes of `vault`, else
    the configured one, anchored to it or its dependants), then the dependants, closest first;
    `budget` (tokens) cuts the answer to fit."""
    from vault_kg.query import verbs as q

    chosen = view if view is not None else _view(scope, vault)
    return q.affected(chosen, symbol, depth, include_stale=include_stale, vault=Path(vault).expanduser() if vault is not None else None, budget=budget)


def stats(scope: str | None = None, vault: PathLike | None = None, *, view: Any = None) -> dict[str, Any]:
    """A scope's counts; for a vault, the model pass's state too (`model`: one line)."""
    from vault_kg.core.config import load_config
    from vault_kg.jobs.model_worker import state_line
    from vault_kg.query import verbs as q

    view = view if view is not None else _view(scope, vault)
    data = q.stats(view)
    if data.get("kind") == "vault":
        data["model"] = state_line(view.scope.out, load_config())
    return data


def check(vault: PathLike | None = None, projects: list[str] | None = None, strict: bool = False, as_of: str | None = None) -> dict[str, Any]:
    """Anchored notes whose code changed (all anchors, or only those into `projects`; `as_of`: as believed that day)."""
    from vault_kg.anchors.check import check as run

    return run(_vault(vault), projects, strict, as_of)


def reanchor(note: str, vault: PathLike | None = None) -> dict[str, Any]:
    """Move a dirty note's anchors to where the same code now stands (same name and hash; never fuzzy)."""
    from vault_kg.notes.anchor_repair import reanchor as run

    return run(_vault(vault), note)


def accept(note: str, vault: PathLike | None = None) -> dict[str, Any]:
    """Take a dirty note's anchored code as it is now: its anchors' hashes recorded again."""
    from vault_kg.notes.anchor_repair import accept as run

    return run(_vault(vault), note)


def supersede(old: str, new: str, vault: PathLike | None = None, on: str | None = None) -> dict[str, Any]:
    """Mark `old` as superseded by `new` (history appended, never rewritten)."""
    from vault_kg.notes.anchor_repair import supersede as run

    return run(_vault(vault), old, new, on)


def retire(note: str, reason: str, vault: PathLike | None = None, on: str | None = None) -> dict[str, Any]:
    """Retire a note with a reason (it stays, marked superseded by nothing)."""
    from vault_kg.notes.anchor_repair import retire as run

    return run(_vault(vault), note, reason, on)


def read_note(name: str, vault: PathLike | None = None) -> Any:
    from vault_kg.notes.notebook import read_note as run

    return run(_vault(vault), name)


def list_notes(vault: PathLike | None = None, folder: str | None = None, tag: str | None = None, since_days: float | None = None, limit: int = 50, sort: str = "recent") -> Any:
    from vault_kg.notes.notebook import list_notes as run

    return run(_vault(vault), folder, tag, since_days, limit, sort)


def append_note(name: str, text: str, vault: PathLike | None = None, *, long_lived: bool = False) -> Any:
    """Append to a note through the one guarded write, and update the graph."""
    from vault_kg.notes.notebook import append_note as run

    return run(_vault(vault), name, text, long_lived=long_lived)


def edit_note(name: str, old_text: str, new_text: str, vault: PathLike | None = None, replace_all: bool = False, *, long_lived: bool = False) -> Any:
    """Replace text in a note through the one guarded write, and update the graph."""
    from vault_kg.notes.notebook import edit_note as run

    return run(_vault(vault), name, old_text, new_text, replace_all, long_lived=long_lived)


def journal_add(text: str, vault: PathLike | None = None, project: str | None = None) -> Any:
    """Append a timestamped entry to today's journal note."""
    from vault_kg.notes.notebook import journal_add as run

    return run(_vault(vault), text, project)


def recent(vault: PathLike | None = None, days: float = 1.0, limit: int = 50) -> Any:
    """What changed in the vault lately: notes edited, journal entries."""
    from vault_kg.notes.notebook import recent as run

    return run(_vault(vault), days, limit)


def ledger(vault: PathLike | None = None) -> dict[str, Any]:
    """The vault's notes sorted into working, redundant, dormant and prunable, from the recall log."""
    from vault_kg.memory.ledger import ledger as run

    return run(_vault(vault))


def anchor(note: str, to: str, vault: PathLike | None = None, project: str | None = None) -> dict[str, Any]:
    from vault_kg.notes.anchor_repair import add_anchor

    return add_anchor(_vault(vault), note, to, project)


def recall(question: str, vault: PathLike | None = None, limit: int = 10) -> dict[str, Any]:
    """Dated journal entries for `question` (dates in it narrow the days searched)."""
    return recall_with_text(question, vault, limit)[1]


def recall_with_text(question: str, vault: PathLike | None = None, limit: int = 10) -> tuple[str, dict[str, Any]]:
    """`recall`, with the text `kg recall` prints for it."""
    from episodic.recall import format_result

    found = recall_result(question, vault, limit)
    return format_result(found), found.to_dict()


def recall_result(question: str, vault: PathLike | None = None, limit: int = 10, now: Any = None) -> Any:
    """`recall` as `episodic.recall.RecallResult`: kg's passage index searches, or memsearch when
    the config asks for it (`[recall] backend = "memsearch"`)."""
    from episodic.dates import resolve_timezone
    from vault_kg.core.config import load_config
    from vault_kg.memory import journal_recall

    cfg = load_config()
    root, tz = _vault(vault).root, resolve_timezone(cfg.timezone)
    if journal_recall.backend(cfg) == journal_recall.MEMSEARCH:
        from episodic.recall import recall as run

        return run(root, question, now=now, tz=tz, limit=limit)
    return journal_recall.recall(root, question, now=now, tz=tz, limit=limit)


def remember(
    path: str,
    summary: str,
    tags: list[str],
    body: str = "",
    vault: PathLike | None = None,
    anchor: str | None = None,
    project: str | None = None,
    *,
    long_lived: bool = False,
) -> dict[str, Any]:
    """A new vault note in the frontmatter contract, added to the graph (`long_lived`: the MCP server starts the model worker at once)."""
    from vault_kg.notes.remember import remember_note

    return remember_note(_vault(vault), path, summary, tags, body, anchor, project, long_lived=long_lived)


def brief(vault: PathLike | None = None, cwd: PathLike | None = None) -> dict[str, Any]:
    """The session brief for a session in `cwd` (default: the current directory)."""
    from vault_kg.memory.session_brief import brief as make
    from vault_kg.core.place import locate

    return make(locate(Path(cwd) if cwd is not None else None, vault=Path(vault).expanduser() if vault is not None else None)).as_dict()


def doctor(vault: PathLike | None = None, measure: bool = True) -> dict[str, Any]:
    """Whether kg works here: a verdict per line (install, launcher, config, vault, scopes, model,
    embedder, hooks, watcher, sync), `broken` when one fails; `measure` times the model and the embedder."""
    from vault_kg.health.doctor import doctor as check_all

    return check_all(Path(vault) if vault is not None else None, measure)


def lint(vault: PathLike | None = None, fix: bool = False, show_all: bool = False) -> dict[str, Any]:
    """The frontmatter contract's findings, counted first; `fix` quotes the property values YAML
    refused for holding `: ` (the one safe fix) before looking."""
    from vault_kg.notes.lint import lint as run
    from vault_kg.notes.lint_fix import fix_frontmatter

    scope = _vault(vault)
    return run(scope, show_all=show_all, fixed=fix_frontmatter(scope) if fix else None)


def note_warnings(root: Path, rel: str) -> list[str]:
    """What a build says about one vault note as it is now (its properties ignored, and why)."""
    from vault_kg.notes.lint import note_warnings as warnings

    return warnings(root, rel)


# ---------------------------------------------------------------------------- what the hooks ask


def cache_problem(root: Path) -> str | None:
    """Why the cache of the scope at `root` cannot serve a one-file update (None: it can); read-only."""
    from vault_kg.storage.cache import problem
    from vault_kg.storage.layout import cache_db

    return problem(cache_db(root))


def is_built(root: Path) -> bool:
    """True when the scope at `root` has a graph (an update on an unbuilt scope would be partial)."""
    from vault_kg.storage.layout import is_built as built

    return built(root)


def rebuild_in_background(kind: str, name: str, root: Path) -> bool:
    """Start a full rebuild of the scope at `root` in the background; False when one already runs."""
    from vault_kg.jobs import reconcile

    if reconcile.running(root):
        return False
    reconcile.launch([{"kind": kind, "name": name, "root": str(root)}])
    return True


def refresh_in_background(targets: list[dict[str, str]], days: int) -> list[tuple[dict[str, str], float | None]]:
    """Start the background update of each built scope with none running; the overdue ones (not
    refreshed for `days`), each with its age in days (None: never), which the brief names."""
    from vault_kg.jobs import reconcile

    return [(t, reconcile.age_days(Path(t["root"]))) for t in reconcile.refresh(targets, days)]


def index_note_later(vault: Path, note: Path) -> None:
    """`kg update NOTE` in the background (the session-end hook's journal note)."""
    from vault_kg.jobs.reconcile import index_later

    index_later(vault, note)


def write_target(tool_name: Any, tool_input: Any, cwd: Path) -> Any:
    """The file an agent's write would touch, when the guardrails have a say about it (else None)."""
    from vault_kg.memory.guardrails import target_path

    return target_path(tool_name, tool_input, cwd)


def decide_write(tool_name: Any, tool_input: Any, cwd: Path, cfg: Any, vault: Path | None) -> Any:
    """The guardrails' refusal of an agent's write (`.reason`), or None to let it through."""
    from vault_kg.memory.guardrails import decide

    return decide(tool_name, tool_input, cwd, cfg, vault=vault)


def session_brief(place: Any, notice: Callable[..., list[str]]) -> Any:
    """The session brief for `place` (`.text`, `.errors`); `notice` adds the reconcile line."""
    from vault_kg.memory.session_brief import brief as make

    return make(place, notice)


def one_line(text: str, limit: int) -> str:
    """`text` as one line of at most `limit` characters, safe inside the brief's fence."""
    from vault_kg.memory.session_brief import one_line as line

    return line(text, limit)


def record_brief(place: Any) -> None:
    """Note the brief's notes in this machine's recall log."""
    from vault_kg.memory.session_brief import record_brief as record

    record(place)


def push_recall(vault: Path, cfg: Any, prompt: str, session: str) -> str | None:
    """At most one vault note for the prompt, rendered as dismissible background and logged; None: silence."""
    from vault_kg.memory.push_recall import recall_for_prompt, render
    from vault_kg.memory.recall_log import record

    pick = recall_for_prompt(vault, cfg, prompt, session)
    if pick is None:
        return None
    record(vault, "push", [pick.id], query=prompt, session=session)
    return render(pick)


def reset_push_recall(vault: Path, session: str) -> None:
    """The context was compacted: push-recall's dedup window starts over."""
    from vault_kg.memory.push_recall import reset_window

    reset_window(vault, session)


def credit_turn(vault: Path, cfg: Any, transcript: Path | str, session: str) -> None:
    """Credit the notes anchored to files the last turn edited, and mark the push-recall notes it used."""
    from vault_kg.memory.credit import credit_turn as credit

    credit(vault, cfg, transcript, session)


def journal_session(vault: Path, transcript: str, project: str | None, timezone: Any) -> Any:
    """Append the session's journal entry (`.file`: the day's note, vault-relative)."""
    from episodic.dates import resolve_timezone
    from episodic.transcript import accepted_transcript, journal_session as journal

    return journal(vault, accepted_transcript(transcript), project=project, tz=resolve_timezone(timezone))


def renderers() -> dict[str, Callable[[Any], str]]:
    """The CLI's text renderer of each verb, by verb name."""
    from vault_kg.query import verbs as q
    from vault_kg.notes.anchor_repair import format_anchor
    from vault_kg.anchors.check import format_check
    from vault_kg.memory.session_brief import format_brief
    from vault_kg.notes.lint import format_lint
    from vault_kg.notes.remember import format_remember
    from vault_kg.jobs.scope_update import format_run

    return {
        "update": lambda runs: "\n".join(format_run(_Run(r), "updated") for r in runs),
        "query": q.format_query,
        "explain": q.format_explain,
        "neighbors": q.format_neighbors,
        "path": q.format_path,
        "god_nodes": q.format_god_nodes,
        "affected": q.format_affected,
        "check": format_check,
        "anchor": format_anchor,
        "remember": format_remember,
        "brief": format_brief,
        "lint": format_lint,
        "stats": q.format_stats,
        **_note_renderers(),
    }


def _note_renderers() -> dict[str, Callable[[Any], str]]:
    from vault_kg.health.report import format_doctor
    from vault_kg.memory.ledger import format_ledger
    from vault_kg.notes import anchor_repair as repair
    from vault_kg.notes import notebook as nb

    return {
        "reanchor": repair.format_reanchor,
        "accept": repair.format_accept,
        "supersede": repair.format_supersede,
        "retire": repair.format_retire,
        "read_note": nb.format_read,
        "list_notes": nb.format_list,
        "append_note": nb.format_write,
        "edit_note": nb.format_write,
        "journal_add": nb.format_entry,
        "recent": nb.format_recent,
        "ledger": format_ledger,
        "doctor": format_doctor,
    }


class _Run:
    """A run summary dict seen through the attribute names `format_run` reads."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.__dict__.update(data)


def renderer(verb: str) -> Callable[[Any], str]:
    """The CLI's text renderer of one verb (`KeyError` for an unknown verb)."""
    return renderers()[verb]


def probe_noop(scope: Scope) -> Any:
    """The `RunResult` of an update of `scope` that finds nothing to do, or None when it would do
    something; read-only, and cheap enough for `kg update`'s fast path."""
    from vault_kg.update.noop_probe import probe

    return probe(scope)


def format_run(result: Any, verb: str) -> str:
    """The one line `kg build`/`kg update` print for a run (`verb`: built or updated)."""
    from vault_kg.jobs.scope_update import format_run as line

    return line(result, verb)


def problems_of(result: Any, root: Path) -> list[str]:
    """What a run found wrong, one `kg: ...` line each (notices, quarantined files, warnings, new skips)."""
    from vault_kg.jobs.scope_update import problems_of as lines

    return lines(result, root)


def model_notice(scope: Scope, pending: int, cfg: Any, always: bool = False) -> str | None:
    """One line about why a vault's notes stay pending for the model: once per cause, or `always`
    (after `kg build`, the first one included); None when there is nothing to say."""
    if scope.kind != "vault" or not cfg.ollama_enabled:
        return None
    from vault_kg.jobs.model_worker import notice

    return notice(scope.out, pending, cfg.ollama_host, always=always)


def notes_dirtied(project: str, relpaths: list[str], vault: Path | None = None, cfg: Any = None) -> list[str]:
    """After a code edit in `project`: one line per anchored vault note the edit just made dirty."""
    from vault_kg.anchors.dirtied_notes import notes_dirtied as lines

    return lines(project, relpaths, vault, cfg)


def render(verb: str, data: Any) -> str:
    """The text `kg VERB` prints for `data` (what a verb above returned)."""
    table = renderers()
    if verb not in table:
        raise KeyError(f"no renderer for {verb!r}; known: {', '.join(sorted(table))}")
    return table[verb](data)
