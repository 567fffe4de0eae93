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

PathLike = str | Path


def _vault(vault: PathLike | None) -> Scope:
    from vault_kg.core.scopes import vault_scope

    return vault_scope(Path(vault).expanduser() if vault is not None else None)


def _scopes(scope: str | list[str] | None, vault: PathLike | None) -> list[Scope]:
    from vault_kg.core.scopes import resolve_scopes

    names = [scope] if isinstance(scope, str) else scope
    return resolve_scopes(names, Path(vault).expanduser() if vault is not None else None)


def _view(scope: str | None, vault: PathLike | None) -> Any:
    from vault_kg.query.graph_view import load_view

    return load_view(_scopes(scope, vault)[0])


def update(scope: str | list[str] | None = None, vault: PathLike | None = None, paths: list[PathLike] | None = None, force: bool = False) -> list[dict[str, Any]]:
    """Bring the graphs up to date (only `paths` when given); one run summary per scope."""
    from vault_kg.jobs.scope_update import update_scope

    return [update_scope(s, [Path(p) for p in paths] if paths else None, force).as_dict() for s in _scopes(scope, vault)]


def query(question: str, scope: str | list[str] | None = None, vault: PathLike | None = None, budget: int = 1500, depth: int = 2, include_stale: bool = False) -> dict[str, Any]:
    from vault_kg.query import verbs as q

    return q.query(_scopes(scope, vault), question, budget, include_stale, depth)


def explain(name: str, scope: str | None = None, vault: PathLike | None = None, include_stale: bool = False) -> dict[str, Any]:
    from vault_kg.query import verbs as q

    return q.explain(_view(scope, vault), name, include_stale)


def neighbors(name: str, scope: str | None = None, vault: PathLike | None = None, relation: str | None = None, direction: str = "both", limit: int = 50) -> dict[str, Any]:
    from vault_kg.query import verbs as q

    return q.neighbors(_view(scope, vault), name, relation, direction, limit)


def path(a: str, b: str, scope: str | None = None, vault: PathLike | None = None) -> dict[str, Any]:
    from vault_kg.query import verbs as q

    return q.path(_view(scope, vault), a, b)


def god_nodes(scope: str | None = None, vault: PathLike | None = None, n: int = 10) -> list[dict[str, Any]]:
    from vault_kg.query import verbs as q

    return q.god_nodes(_view(scope, vault), n)


def affected(symbol: str, scope: str | None = None, vault: PathLike | None = None, depth: int = 3) -> dict[str, Any]:
    from vault_kg.query import verbs as q

    return q.affected(_view(scope, vault), symbol, depth)


def check(vault: PathLike | None = None, projects: list[str] | None = None, strict: bool = False) -> dict[str, Any]:
    """Anchored notes whose code changed (all anchors, or only those into `projects`)."""
    from vault_kg.anchors.check import check as run

    return run(_vault(vault), projects, strict)


def anchor(note: str, to: str, vault: PathLike | None = None, project: str | None = None) -> dict[str, Any]:
    from vault_kg.notes.anchor_repair import add_anchor

    return add_anchor(_vault(vault), note, to, project)


def recall(question: str, vault: PathLike | None = None, limit: int = 10) -> dict[str, Any]:
    from episodic.dates import resolve_timezone
    from episodic.recall import recall as run

    from vault_kg.core.config import load_config

    return run(_vault(vault).root, question, tz=resolve_timezone(load_config().timezone), limit=limit).to_dict()


def remember(path: str, summary: str, tags: list[str], body: str = "", vault: PathLike | None = None, anchor: str | None = None, project: str | None = None) -> dict[str, Any]:
    from vault_kg.notes.remember import remember_note

    return remember_note(_vault(vault), path, summary, tags, body, anchor, project)


def brief(vault: PathLike | None = None, cwd: PathLike | None = None) -> dict[str, Any]:
    """The session brief for a session in `cwd` (default: the current directory)."""
    from vault_kg.memory.session_brief import brief as make
    from vault_kg.core.place import locate

    return make(locate(Path(cwd) if cwd is not None else None, vault=Path(vault).expanduser() if vault is not None else None)).as_dict()


def lint(vault: PathLike | None = None) -> dict[str, Any]:
    from vault_kg.notes.lint import lint as run

    return run(_vault(vault))


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
        "query": q.format_query, "explain": q.format_explain, "neighbors": q.format_neighbors, "path": q.format_path,
        "god_nodes": q.format_god_nodes, "affected": q.format_affected, "check": format_check, "anchor": format_anchor,
        "remember": format_remember, "brief": format_brief, "lint": format_lint,
    }


class _Run:
    """A run summary dict seen through the attribute names `format_run` reads."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.__dict__.update(data)


def render(verb: str, data: Any) -> str:
    """The text `kg VERB` prints for `data` (what a verb above returned)."""
    table = renderers()
    if verb not in table:
        raise KeyError(f"no renderer for {verb!r}; known: {', '.join(sorted(table))}")
    return table[verb](data)
