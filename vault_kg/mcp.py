"""`kg mcp`: the graph as MCP tools over stdio (fastmcp), for Claude Code and any other harness.

Each tool is a thin shell over the library function the CLI command of the same name calls, and
answers twice: the CLI's text (what a model reads best) as content, the CLI's `--json` data as
structured content. Inputs are bounded by their schemas and checked again by the library; a bad
input or a missing graph comes back as one clear line (a ToolError), never a traceback.

Library work runs on worker threads (at most `WORKERS` at once), so one slow call (a recall
waiting for the journal index, a long update) never stops the others from answering. Each
worker thread keeps its own views, so a SQLite reader is always used from the thread that opened
it. Views are cached per scope and dropped as soon as the scope's cache file changes (a `kg
update`, a hook, another session), so answers are always current and a warm `query` costs a few
milliseconds.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

import anyio.to_thread
from anyio import CapacityLimiter
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import ToolResult
from pydantic import Field

from . import __version__
from . import query as q
from .core import store
from .core.config import load_config
from .core.errors import KgError
from .scopes import Scope, resolve_scopes

INSTRUCTIONS = """\
vault-kg: a knowledge graph over the user's markdown vault (scope `vault`) and each registered code
repository (scope = the project's name). Without `scope`, tools use the project the server runs in,
else the vault. Start with `query` (a question in words); follow up with `explain`, `neighbors`,
`path` and `affected` on the ids or titles it returns; `god_nodes` shows what is central; `check`
lists notes whose anchored code changed; `recall` searches the dated journal of past sessions;
`remember` saves a new note. Answers cite `file:line`. Notes marked STALE or SUPERSEDED are not current.
"""

Question = Annotated[str, Field(min_length=1, max_length=2000, description="What you want to know, in words.")]
ScopeName = Annotated[str | None, Field(default=None, max_length=200, description="`vault` or a registered project name; default: the current project, else the vault.")]
WORKERS = 8
NodeName = Annotated[str, Field(min_length=1, max_length=500, description="A note title, vault path, alias, #tag, symbol locator or node id.")]


class ViewCache:
    """One open GraphView per scope, replaced when the scope's cache file changes on disk."""

    def __init__(self) -> None:
        self._views: dict[tuple[str, Path], tuple[tuple[int, ...], Any]] = {}

    @staticmethod
    def signature(scope: Scope) -> tuple[int, ...]:
        db = store.Layout(scope.out).cache_db
        sig: list[int] = []
        for path in (db, Path(f"{db}-wal")):
            try:
                st = os.stat(path)
                sig += [st.st_mtime_ns, st.st_size, st.st_ino]
            except OSError:
                sig += [0, 0, 0]
        return tuple(sig)

    def get(self, scope: Scope) -> Any:
        from .graphview import load_view

        key = (scope.name, scope.out)
        sig = self.signature(scope)
        cached = self._views.get(key)
        if cached is not None and cached[0] == sig:
            cached[1].forget_rows()  # code may have moved on since: freshness is checked per call
            return cached[1]
        if cached is not None:
            cached[1].reader.close()
        view = load_view(scope)
        self._views[key] = (sig, view)
        return view


class KgServer:
    """The state behind the tools: the vault flag, the worker threads and their view caches."""

    def __init__(self, vault: Path | None = None, workers: int = WORKERS) -> None:
        self.vault = vault
        self.limiter = CapacityLimiter(workers)
        self._local = threading.local()

    @property
    def views(self) -> ViewCache:
        """This worker thread's views (SQLite readers stay on the thread that opened them)."""
        cache = getattr(self._local, "views", None)
        if cache is None:
            cache = self._local.views = ViewCache()
        return cache

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run library code on a worker thread; user-caused failures become one-line ToolErrors.

        A call the client gives up on is abandoned (its thread finishes on its own), so a stuck
        call never holds the server.
        """
        try:
            return await anyio.to_thread.run_sync(fn, *args, limiter=self.limiter, abandon_on_cancel=True)
        except KgError as exc:
            raise ToolError(str(exc)) from exc
        except OSError as exc:
            raise ToolError(f"{exc.filename or 'file'}: {exc.strerror or exc}; check the path and permissions") from exc

    def scopes(self, names: list[str] | None) -> list[Scope]:
        return resolve_scopes(names or None, self.vault, cfg=load_config())

    def scope(self, name: str | None) -> Scope:
        return self.scopes([name] if name else None)[0]

    def view(self, name: str | None) -> Any:
        return self.views.get(self.scope(name))

    def vault_scope(self) -> Scope:
        from .scopes import vault_scope

        return vault_scope(self.vault, cfg=load_config())


def result(text: str, data: Any) -> ToolResult:
    return ToolResult(content=text, structured_content=data if isinstance(data, dict) else {"result": data})


def build_server(vault: Path | None = None) -> FastMCP:
    """The FastMCP app with every tool and resource registered (used by `kg mcp` and tests)."""
    kg = KgServer(vault)
    from .watch import server_lifespan

    mcp = FastMCP("vault-kg", instructions=INSTRUCTIONS, version=__version__, lifespan=server_lifespan(vault))

    @mcp.tool(annotations={"readOnlyHint": True})
    async def query(
        question: Question,
        scopes: Annotated[list[str] | None, Field(default=None, max_length=20, description="Scopes to search together, e.g. [\"vault\", \"payments\"]; default: the current project, else the vault.")] = None,
        budget: Annotated[int, Field(ge=100, le=q.MAX_BUDGET, description="Answer size cap in tokens.")] = 1500,
        depth: Annotated[int, Field(ge=0, le=q.MAX_DEPTH, description="Expansion hops from the best matches.")] = 2,
        include_stale: Annotated[bool, Field(description="Also show stale/superseded nodes, flagged.")] = False,
        tags: Annotated[list[str] | None, Field(default=None, max_length=20, description="Only hits with one of these tags (or a child tag), e.g. [\"client/acme\"].")] = None,
        folder: Annotated[str | None, Field(default=None, max_length=300, description="Only hits whose file lies under this folder, e.g. \"services\".")] = None,
        kinds: Annotated[list[str] | None, Field(default=None, max_length=20, description="Only these kinds: note, journal, code, entity, section, function, class, method, ... Journal days show only when asked for.")] = None,
        since: Annotated[str | None, Field(default=None, max_length=10, description="Only hits dated on or after this day, YYYY-MM-DD.")] = None,
        until: Annotated[str | None, Field(default=None, max_length=10, description="Only hits dated on or before this day, YYYY-MM-DD.")] = None,
    ) -> ToolResult:
        """Answer a question from the graph: the best-matching notes/symbols first, then what they connect to, each with file:line and a verbatim snippet, within a token budget.

        Example: query(question="how do we retry failed Stripe webhooks", budget=800)
        Example: query(question="webhooks", kinds=["journal"], since="2025-03-01")
        """
        def work() -> ToolResult:
            from .memory_kinds import make_filters
            from .recall_log import record_hits

            chosen = kg.scopes(scopes)
            answer = q.query(chosen, question, budget, include_stale, depth, filters=make_filters(tags, folder, kinds, since, until))
            record_hits(chosen, answer, "mcp-query", question)
            return result(q.format_query(answer), answer)

        return await kg.call(work)

    @mcp.tool(annotations={"readOnlyHint": True})
    async def explain(node: NodeName, scope: ScopeName = None, include_stale: bool = False) -> ToolResult:
        """One node in full: its attributes (summary, tags, aliases, anchor, rank), source lines, and its neighbours grouped by relation and direction.

        Example: explain(node="Payments API")
        """
        def work() -> ToolResult:
            from .recall_log import record_hits

            view = kg.view(scope)
            answer = q.explain(view, node, include_stale)
            record_hits([view.scope], answer, "mcp-explain", node)
            return result(q.format_explain(answer), answer)

        return await kg.call(work)

    @mcp.tool(annotations={"readOnlyHint": True})
    async def neighbors(
        node: NodeName,
        relation: Annotated[str | None, Field(default=None, max_length=100, description="Only this relation, e.g. links_to, tagged, calls, imports, anchored_to.")] = None,
        direction: Annotated[Literal["in", "out", "both"], Field(description="out: what the node points to; in: what points to it.")] = "both",
        scope: ScopeName = None,
        limit: Annotated[int, Field(ge=1, le=500, description="At most this many neighbours.")] = 50,
    ) -> ToolResult:
        """The nodes directly connected to a node, with the relation, direction, confidence and line of each edge.

        Example: neighbors(node="Payments API", relation="links_to", direction="in")
        """
        def work() -> ToolResult:
            answer = q.neighbors(kg.view(scope), node, relation, direction, limit)
            return result(q.format_neighbors(answer), answer)

        return await kg.call(work)

    @mcp.tool(annotations={"readOnlyHint": True})
    async def path(a: NodeName, b: NodeName, scope: ScopeName = None) -> ToolResult:
        """The shortest meaningful path between two nodes (tag hubs only when nothing else connects them), each hop with its relation, direction and citing line.

        Example: path(a="Webhook Relay", b="Acme Corp")
        """
        def work() -> ToolResult:
            answer = q.path(kg.view(scope), a, b)
            return result(q.format_path(answer), answer)

        return await kg.call(work)

    @mcp.tool(annotations={"readOnlyHint": True})
    async def god_nodes(scope: ScopeName = None, n: Annotated[int, Field(ge=1, le=200, description="How many.")] = 10) -> ToolResult:
        """The most central nodes of a scope (weighted PageRank; tag hubs, files and tests left out), with summaries: where to start reading.

        Example: god_nodes(scope="vault", n=5)
        """
        def work() -> ToolResult:
            rows = q.god_nodes(kg.view(scope), n)
            return result(q.format_god_nodes(rows, with_rank=False), {"nodes": rows})

        return await kg.call(work)

    @mcp.tool(annotations={"readOnlyHint": True})
    async def affected(
        symbol: NodeName,
        scope: ScopeName = None,
        depth: Annotated[int, Field(ge=1, le=q.MAX_DEPTH, description="Hops of dependants to follow.")] = 3,
    ) -> ToolResult:
        """What depends on a symbol or note (callers, importers, subclasses, anchored notes, linking notes), transitively: the blast radius of a change.

        Example: affected(symbol="app/webhooks/stripe.py › function handle", scope="payments", depth=2)
        """
        def work() -> ToolResult:
            answer = q.affected(kg.view(scope), symbol, depth, vault=kg.vault_scope().root)
            return result(q.format_affected(answer), answer)

        return await kg.call(work)

    @mcp.tool(annotations={"readOnlyHint": True})
    async def check(scope: ScopeName = None) -> ToolResult:
        """Anchored notes whose code changed: each dirty node with one reason (artifact missing, symbol not found, hash changed, propagated from …).

        Example: check(scope="vault")
        """
        def work() -> ToolResult:
            answer = run_check(kg.vault_scope(), kg.scope(scope))
            return result(answer.pop("text"), answer)

        return await kg.call(work)

    @mcp.tool(annotations={"readOnlyHint": True})
    async def recall(question: Question, limit: Annotated[int, Field(ge=1, le=50, description="At most this many entries.")] = 10) -> ToolResult:
        """Search the dated journal of past sessions; dates in the question (today, yesterday, last week, weekday names, 2025-03-14) narrow the days searched.

        Example: recall(question="when did I fix the webhook retries")
        """
        def work() -> ToolResult:
            from episodic import recall as rc
            from episodic.dates import resolve_timezone

            vault = kg.vault_scope().root
            found = rc.recall(vault, question, tz=resolve_timezone(load_config().timezone), limit=limit)
            return result(rc.format_result(found), found.to_dict())

        return await kg.call(work)

    @mcp.tool(annotations={"destructiveHint": False, "idempotentHint": False})
    async def remember(
        path: Annotated[str, Field(min_length=4, max_length=300, description="Vault-relative path of the new note, e.g. `notes/Webhook retry budget.md`.")],
        summary: Annotated[str, Field(min_length=1, max_length=300, description="One line saying what the note is about.")],
        tags: Annotated[list[str], Field(min_length=1, max_length=20, description="Namespaced tags, including one `scope/…` tag, e.g. [\"topic/payments\", \"scope/payments\"]; `scope/global` is refused (promotion goes through `kg promote`).")],
        body: Annotated[str, Field(max_length=100_000, description="The note's markdown body; [[wikilinks]] to other notes connect it.")] = "",
        anchor: Annotated[str | None, Field(default=None, max_length=500, description="Optional: what the note describes, so it goes stale when that changes: `PATH::SYMBOL` (code, e.g. `app/retry.py::Client.fetch`), `PATH#Heading` (markdown) or `[[Other Note]]`.")] = None,
        project: Annotated[str | None, Field(default=None, max_length=200, description="The registered project PATH is in (default: found from PATH).")] = None,
    ) -> ToolResult:
        """Create a new vault note in the frontmatter contract (summary, namespaced tags, a scope/ tag), optionally anchored to code, and add it to the graph. Refuses existing files, paths outside the vault and text that looks like a secret.

        Example: remember(path="notes/Webhook retry budget.md", summary="Stripe webhook retries back off exponentially, 5 attempts max", tags=["topic/payments", "scope/payments"], body="Decided after [[Payments API]] incidents.")
        """
        def work() -> ToolResult:
            answer = remember_note(kg.vault_scope(), path, summary, tags, body, anchor, project)
            return result(answer["text"], answer)

        return await kg.call(work)

    @mcp.resource("kg://report/{scope}", mime_type="text/markdown", description="A scope's GRAPH_REPORT.md: god nodes, communities, stale and unresolved counts. Example: kg://report/vault")
    async def report(scope: str) -> str:
        def work() -> str:
            target = kg.scope(scope)
            try:
                return store.Layout(target.out).report.read_text(encoding="utf-8")
            except OSError as exc:
                raise KgError(f"{store.Layout(target.out).report}: no report yet for scope '{scope}'; run `kg build`") from exc

        return await kg.call(work)

    @mcp.resource("kg://stats/{scope}", mime_type="application/json", description="A scope's counts: sources, nodes, edges, unresolved, quarantined, stale, pending. Example: kg://stats/vault")
    async def stats(scope: str) -> dict[str, Any]:
        return await kg.call(lambda: q.stats(kg.view(scope)))

    return mcp


def run_check(vault: Scope, scope: Scope) -> dict[str, Any]:
    """`kg check` through the anchors module: the vault's anchors, or only those into one project."""
    from .anchor_check import check, format_check

    report = check(vault, None if scope.kind == "vault" else [scope.name])
    return {**report, "text": format_check(report)}


def remember_note(scope: Scope, relpath: str, summary: str, tags: list[str], body: str, anchor: str | None, project: str | None) -> dict[str, Any]:
    """Write the note through the vault's one write path, anchor it if asked, add it to the graph.

    A note whose anchor cannot be made is removed again: the tool does all of it or nothing.
    """
    from .core.vault_guard import safe_relpath
    from .vault_write import render_note, write_note

    target = safe_relpath(scope.root, relpath)
    rel = target.relative_to(scope.root.resolve()).as_posix()
    title = Path(rel).stem
    text = render_note(summary, tags, body if body.lstrip().startswith("# ") else f"# {title}\n\n{body}")
    write_note(scope.root, rel, text, create=True)
    anchored = None
    if anchor:
        from .anchor_repair import add_anchor

        try:
            anchored = add_anchor(scope, rel, anchor, project)["anchor"]
        except BaseException:
            target.unlink(missing_ok=True)
            raise
    indexed = False
    notices: list[str] = []
    if store.Layout(scope.out).cache_db.exists():
        from .engine import run

        from .core.config import load_config
        from .llm_worker import after_update

        outcome = run(scope, paths=[target])
        after_update(scope, outcome, load_config(), hook=False)  # a long-lived server: start now
        indexed = True
        notices = outcome.notices
    where = f"wrote {rel}" + (f", anchored to {anchored.get('note') or anchored['project'] + ':' + anchored['locator']}" if anchored else "")
    where += " and added it to the graph" if indexed else "; run `kg build` to add it to the graph"
    return {"path": rel, "node": f"note:{rel}", "anchor": anchored, "indexed": indexed, "notices": notices, "text": where}


def serve(vault: Path | None = None) -> None:
    """Run the server on stdio until the client closes it."""
    build_server(vault).run(show_banner=False)
