"""`kg mcp`: the graph as MCP tools over stdio (fastmcp), for Claude Code and any other harness.

Each tool is a thin shell over the library function the CLI command of the same name calls, and
answers twice: the CLI's text (what a model reads best) as content, the CLI's `--json` data as
structured content. Inputs are bounded by their schemas and checked again by the library; a bad
input or a missing graph comes back as one clear line (a ToolError), never a traceback.

Library work runs on worker threads (at most `WORKERS` at once), so one slow call (a recall
waiting for the journal index, a long update) never stops the others from answering. Each
worker thread keeps its own views, so a SQLite reader is always used from the thread that opened
it. Views are cached per scope and dropped as soon as the scope's cache file changes (a `kg
update`, a hook, another session), so answers are always current and a warm `query` reads only
rows and edges it has not read before (see `GraphView`).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

import anyio.to_thread
from anyio import CapacityLimiter
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError, ValidationError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult
from pydantic import Field
from pydantic import ValidationError as PydanticValidationError

from vault_kg import __version__, api
from vault_kg.query import verbs as q
from vault_kg.storage.layout import Layout
from vault_kg.core.config import load_config
from vault_kg.core.errors import KgError
from vault_kg.core.scopes import Scope, resolve_scopes

INSTRUCTIONS = """\
vault-kg: a knowledge graph over the user's markdown vault (scope `vault`) and each registered code
repository (scope = the project's name). Without `scope`, tools use the project the server runs in,
else the vault. Start with `query` (a question in words); follow up with `explain`, `neighbors`,
`path` and `affected` on the ids or titles it returns; `god_nodes` shows what is central; `check`
lists notes whose anchored code changed; `recall` searches the dated journal of past sessions;
`remember` saves a new note, `read_note`/`list_notes`/`append_note`/`edit_note` read and change notes, `journal_add` and `recent` keep the diary, `update`/`lint` keep the graph current; `brief` is the session brief (conventions, stale notes, central nodes). Answers cite `file:line`. Notes marked STALE or SUPERSEDED are not current.
"""

Question = Annotated[str, Field(min_length=1, max_length=2000, description="What you want to know, in words.")]
ScopeName = Annotated[str | None, Field(default=None, max_length=200, description="`vault` or a registered project name; default: the current project, else the vault.")]
WORKERS = 8
NodeName = Annotated[str, Field(min_length=1, max_length=500, description="A note title, vault path, alias, #tag, symbol locator or node id.")]


class ViewCache:
    """One open GraphView per scope, replaced when the scope's cache file changes on disk.

    `shared` (one for the whole server) holds what the views of each state of a cache file read,
    whichever worker thread read it (`vault_kg.query.shared_reads`)."""

    def __init__(self, shared: dict[tuple[str, Path], tuple[tuple[int, ...], Any]] | None = None) -> None:
        self._views: dict[tuple[str, Path], tuple[tuple[int, ...], Any]] = {}
        self._shared = shared if shared is not None else {}

    @staticmethod
    def signature(scope: Scope) -> tuple[int, ...]:
        db = Layout(scope.out).cache_db
        sig: list[int] = []
        for path in (db, Path(f"{db}-wal")):
            try:
                st = os.stat(path)
                sig += [st.st_mtime_ns, st.st_size, st.st_ino]
            except OSError:
                sig += [0, 0, 0]
        return tuple(sig)

    def get(self, scope: Scope) -> Any:
        from vault_kg.query.graph_view import load_view

        key = (scope.name, scope.out)
        sig = self.signature(scope)
        cached = self._views.get(key)
        if cached is not None and cached[0] == sig:
            cached[1].forget_rows()  # code may have moved on since: freshness is checked per call
            return cached[1]
        if cached is not None:
            cached[1].reader.close()
        kept = self._shared.get(key)
        if kept is None or kept[0] != sig:
            from vault_kg.query.shared_reads import KeptReads

            if kept is not None:
                kept[1].clear()  # other threads' views of the old file may still hold it
            kept = self._shared[key] = (sig, KeptReads())
        view = load_view(scope, kept[1])
        self._views[key] = (sig, view)
        return view


class KgServer:
    """The state behind the tools: the vault flag, the worker threads and their view caches."""

    def __init__(self, vault: Path | None = None, workers: int = WORKERS) -> None:
        self.vault = vault
        self.limiter = CapacityLimiter(workers)
        self._local = threading.local()
        self._kept: dict[tuple[str, Path], tuple[tuple[int, ...], Any]] = {}  # shared by every thread's views

    @property
    def views(self) -> ViewCache:
        """This worker thread's views (SQLite readers stay on the thread that opened them)."""
        cache = getattr(self._local, "views", None)
        if cache is None:
            cache = self._local.views = ViewCache(self._kept)
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
        from vault_kg.core.scopes import vault_scope

        return vault_scope(self.vault, cfg=load_config())

    async def answer(self, fn: Callable[[], Any], render: Callable[[Any], str]) -> ToolResult:
        """Run a library verb on a worker thread; answer its text rendering and its data."""

        def work() -> ToolResult:
            data = fn()
            return result(render(data), data)

        return await self.call(work)


def result(text: str, data: Any) -> ToolResult:
    return ToolResult(content=text, structured_content=data if isinstance(data, dict) else {"result": data})


class OneLineErrors(Middleware):
    """Arguments that fail their schema come back as one line (`budget: must be ≤ 50000`), not a pydantic dump."""

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: CallNext[Any, ToolResult]) -> ToolResult:
        try:
            return await call_next(context)
        except (ValidationError, PydanticValidationError) as exc:
            raise ToolError(one_line_error(exc, context.message.name)) from None


def one_line_error(exc: Exception, tool: str) -> str:
    """The first problem of a validation error in one line, naming the argument and what to do."""
    cause = exc if isinstance(exc, PydanticValidationError) else exc.__cause__
    if not isinstance(cause, PydanticValidationError):
        return f"{tool}: invalid arguments: {' '.join(str(exc).split())}"
    errors = cause.errors()
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p != tool) or "arguments"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{tool}: {where}: {first.get('msg', 'invalid')}{more}; see the tool's input schema"


def build_server(vault: Path | None = None) -> FastMCP:
    """The FastMCP app with every tool and resource registered (used by `kg mcp` and tests)."""
    kg = KgServer(vault)
    from vault_kg.watch.watcher import server_lifespan

    mcp = FastMCP("vault-kg", instructions=INSTRUCTIONS, version=__version__, lifespan=server_lifespan(vault))
    mcp.add_middleware(OneLineErrors())
    for register in TOOL_GROUPS:
        register(mcp, kg)
    return mcp


def search_tools(mcp: FastMCP, kg: KgServer) -> None:
    """Questions answered from the graph, recorded in the recall log: query (with filters), explain."""

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=object_schema("question", "budget", "hits", "edges", "truncated", "truncated_edges", "multi_scope", "tokens"))
    async def query(
        question: Question,
        scopes: Annotated[
            list[str] | None, Field(default=None, max_length=20, description='Scopes to search together, e.g. ["vault", "payments"]; default: the current project, else the vault.')
        ] = None,
        budget: Annotated[int, Field(ge=100, le=q.MAX_BUDGET, description="Answer size cap in tokens.")] = 1500,
        depth: Annotated[int, Field(ge=0, le=q.MAX_DEPTH, description="Expansion hops from the best matches.")] = 2,
        include_stale: Annotated[bool, Field(description="Also show stale/superseded nodes, flagged.")] = False,
        tags: Annotated[list[str] | None, Field(default=None, max_length=20, description='Only hits with one of these tags (or a child tag), e.g. ["client/acme"].')] = None,
        folder: Annotated[str | None, Field(default=None, max_length=300, description='Only hits whose file lies under this folder, e.g. "services".')] = None,
        kinds: Annotated[
            list[str] | None,
            Field(default=None, max_length=20, description="Only these kinds: note, journal, code, entity, section, function, class, method, ... Journal days show only when asked for."),
        ] = None,
        since: Annotated[str | None, Field(default=None, max_length=10, description="Only hits dated on or after this day, YYYY-MM-DD.")] = None,
        until: Annotated[str | None, Field(default=None, max_length=10, description="Only hits dated on or before this day, YYYY-MM-DD.")] = None,
    ) -> ToolResult:
        """Answer a question from the graph: the best-matching notes/symbols first, then what they connect to, each with file:line and a verbatim snippet, within a token budget.

        Example: query(question="how do we retry failed Stripe webhooks", budget=800)
        Example: query(question="webhooks", kinds=["journal"], since="2025-03-01")
        """

        def answer() -> dict[str, Any]:
            from vault_kg.core.memory_kinds import make_filters

            chosen = kg.scopes(scopes)
            views = [kg.views.get(s) for s in chosen]  # open readers, and the rows and edges they read before
            return api.query(
                question, budget=budget, depth=depth, include_stale=include_stale, filters=make_filters(tags, folder, kinds, since, until), scopes=chosen, views=views, record_as="mcp-query"
            )

        return await kg.answer(answer, api.renderer("query"))

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=object_schema("scope", "node", "outgoing", "incoming"))
    async def explain(node: NodeName, scope: ScopeName = None, include_stale: bool = False) -> ToolResult:
        """One node in full: its attributes (summary, tags, aliases, anchor, rank), source lines, and its neighbours grouped by relation and direction.

        Example: explain(node="Payments API")
        """

        def answer() -> dict[str, Any]:
            return api.explain(node, include_stale=include_stale, view=kg.view(scope), record_as="mcp-explain")

        return await kg.answer(answer, api.renderer("explain"))


def graph_tools(mcp: FastMCP, kg: KgServer) -> None:
    """Walks over the graph: neighbors, path, god_nodes, affected."""

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=object_schema("id", "neighbors", "total"))
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
        return await kg.answer(lambda: api.neighbors(node, relation=relation, direction=direction, limit=limit, view=kg.view(scope)), api.renderer("neighbors"))

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=object_schema("from", "to", "found", "steps", "hops", "via_hubs", "labels"))
    async def path(a: NodeName, b: NodeName, scope: ScopeName = None) -> ToolResult:
        """The shortest meaningful path between two nodes (tag hubs only when nothing else connects them), each hop with its relation, direction and citing line.

        Example: path(a="Webhook Relay", b="Acme Corp")
        """
        return await kg.answer(lambda: api.path(a, b, view=kg.view(scope)), api.renderer("path"))

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=object_schema("nodes"))
    async def god_nodes(scope: ScopeName = None, n: Annotated[int, Field(ge=1, le=200, description="How many.")] = 10) -> ToolResult:
        """The most central nodes of a scope (weighted PageRank; tag hubs, files and tests left out), with summaries: where to start reading.

        Example: god_nodes(scope="vault", n=5)
        """
        return await kg.answer(lambda: {"nodes": api.god_nodes(n=n, view=kg.view(scope))}, lambda d: q.format_god_nodes(d["nodes"], with_rank=False))

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=object_schema("id", "depth", "affected", "truncated"))
    async def affected(
        symbol: NodeName,
        scope: ScopeName = None,
        depth: Annotated[int, Field(ge=1, le=q.MAX_DEPTH, description="Hops of dependants to follow.")] = 3,
    ) -> ToolResult:
        """What depends on a symbol or note (callers, importers, subclasses, anchored notes, linking notes), transitively: the blast radius of a change.

        Example: affected(symbol="app/webhooks/stripe.py › function handle", scope="payments", depth=2)
        """
        return await kg.answer(lambda: api.affected(symbol, vault=kg.vault_scope().root, depth=depth, view=kg.view(scope)), api.renderer("affected"))


def memory_tools(mcp: FastMCP, kg: KgServer) -> None:
    """Staleness, the journal, new notes and the session brief: check, recall, remember, brief."""

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=object_schema("scope", "ok", "dirty", "issues", "counts", "summary"))
    async def check(scope: ScopeName = None) -> ToolResult:
        """Anchored notes whose code changed: each dirty node with one reason (artifact missing, symbol not found, hash changed, propagated from …).

        Example: check(scope="vault")
        """

        def work() -> dict[str, Any]:
            target = kg.scope(scope)
            return api.check(kg.vault_scope().root, None if target.kind == "vault" else [target.name])

        return await kg.answer(work, api.renderer("check"))

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=object_schema("question", "mode", "range", "project", "entries"))
    async def recall(question: Question, limit: Annotated[int, Field(ge=1, le=50, description="At most this many entries.")] = 10) -> ToolResult:
        """Search the dated journal of past sessions; dates in the question (today, yesterday, last week, weekday names, 2025-03-14) narrow the days searched.

        Example: recall(question="when did I fix the webhook retries")
        """

        def work() -> ToolResult:
            return result(*api.recall_with_text(question, kg.vault_scope().root, limit))

        return await kg.call(work)

    @mcp.tool(annotations={"destructiveHint": False, "idempotentHint": False}, output_schema=object_schema("path", "node", "anchor", "indexed", "notices"))
    async def remember(
        path: Annotated[str, Field(min_length=4, max_length=300, description="Vault-relative path of the new note, e.g. `notes/Webhook retry budget.md`.")],
        summary: Annotated[str, Field(min_length=1, max_length=300, description="One line saying what the note is about.")],
        tags: Annotated[
            list[str],
            Field(
                min_length=1,
                max_length=20,
                description='Namespaced tags, including one `scope/…` tag, e.g. ["topic/payments", "scope/payments"]; `scope/global` is refused (promotion goes through `kg promote`).',
            ),
        ],
        body: Annotated[str, Field(max_length=100_000, description="The note's markdown body; [[wikilinks]] to other notes connect it.")] = "",
        anchor: Annotated[
            str | None,
            Field(
                default=None,
                max_length=500,
                description="Optional: what the note describes, so it goes stale when that changes: `PATH::SYMBOL` (code, e.g. `app/retry.py::Client.fetch`), `PATH#Heading` (markdown) or `[[Other Note]]`.",
            ),
        ] = None,
        project: Annotated[str | None, Field(default=None, max_length=200, description="The registered project PATH is in (default: found from PATH).")] = None,
    ) -> ToolResult:
        """Create a new vault note in the frontmatter contract (summary, namespaced tags, a scope/ tag), optionally anchored to code, and add it to the graph. Refuses existing files, paths outside the vault and text that looks like a secret.

        Example: remember(path="notes/Webhook retry budget.md", summary="Stripe webhook retries back off exponentially, 5 attempts max", tags=["topic/payments", "scope/payments"], body="Decided after [[Payments API]] incidents.")
        """
        return await kg.answer(lambda: api.remember(path, summary, tags, body, kg.vault_scope().root, anchor, project, long_lived=True), api.renderer("remember"))

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=object_schema("text", "vault", "project", "sections", "errors"))
    async def brief() -> ToolResult:
        """The session brief the SessionStart hook injects: the project's conventions, stale notes, central code and notes, recent journal days, fenced as reference data.

        Example: brief()
        """
        return await kg.answer(lambda: api.brief(vault=kg.vault), api.renderer("brief"))


def resources(mcp: FastMCP, kg: KgServer) -> None:
    """Read-only documents: a scope's GRAPH_REPORT.md and its counts."""

    @mcp.resource("kg://report/{scope}", mime_type="text/markdown", description="A scope's GRAPH_REPORT.md: god nodes, communities, stale and unresolved counts. Example: kg://report/vault")
    async def report(scope: str) -> str:
        def work() -> str:
            target = kg.scope(scope)
            try:
                return Layout(target.out).report.read_text(encoding="utf-8")
            except OSError as exc:
                raise KgError(f"{Layout(target.out).report}: no report yet for scope '{scope}'; run `kg build`") from exc

        return await kg.call(work)

    @mcp.resource("kg://stats/{scope}", mime_type="application/json", description="A scope's counts: sources, nodes, edges, unresolved, quarantined, stale, pending. Example: kg://stats/vault")
    async def stats(scope: str) -> dict[str, Any]:
        return await kg.call(lambda: api.stats(view=kg.view(scope)))


def object_schema(*keys: str) -> dict[str, Any]:
    """An output schema naming the top-level keys a verb's data always carries (more may follow)."""
    return {"type": "object", "properties": {key: {} for key in keys}, "additionalProperties": True}


def schema_of(shape: Any) -> dict[str, Any]:
    """The JSON schema of a library verb's return type (a TypedDict), as the tool's output schema."""
    from pydantic import TypeAdapter

    return TypeAdapter(shape).json_schema()


def note_tools(mcp: FastMCP, kg: KgServer) -> None:
    """Notes the way a memory server's user reaches for them: read, list, append, edit, journal, recent."""
    from vault_kg.notes import notebook as nb

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=schema_of(nb.NoteText))
    async def read_note(note: NodeName) -> ToolResult:
        """A vault note in full: its text, its frontmatter as data, its body, size and modification time.

        Example: read_note(note="Payments API")
        """
        return await kg.answer(lambda: nb.read_note(kg.vault_scope(), note), nb.format_read)

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=schema_of(nb.NoteList))
    async def list_notes(
        folder: Annotated[str | None, Field(default=None, max_length=300, description="Only notes under this vault folder, e.g. `clients`.")] = None,
        tag: Annotated[str | None, Field(default=None, max_length=200, description="Only notes with this frontmatter tag; `client` also matches `client/acme`.")] = None,
        since_days: Annotated[float | None, Field(default=None, gt=0, le=3660, description="Only notes changed in the last N days.")] = None,
        sort: Annotated[Literal["recent", "path"], Field(description="recent: newest first; path: alphabetical.")] = "recent",
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many notes.")] = 50,
    ) -> ToolResult:
        """Browse the vault: notes by folder, tag or recent change, each with its summary and tags.

        Example: list_notes(folder="clients", tag="client/acme", since_days=7)
        """
        return await kg.answer(lambda: nb.list_notes(kg.vault_scope(), folder, tag, since_days, limit, sort), nb.format_list)

    @mcp.tool(annotations={"destructiveHint": False, "idempotentHint": False}, output_schema=schema_of(nb.NoteWrite))
    async def append_note(note: NodeName, text: Annotated[str, Field(min_length=1, max_length=100_000, description="Markdown to add at the end of the note.")]) -> ToolResult:
        """Add text at the end of an existing note and update the graph. Refuses text that looks like a secret, a new `scope/global` tag and journal days (use journal_add).

        Example: append_note(note="Payments API", text="Retries now back off exponentially (see [[Webhook Relay]]).")
        """
        return await kg.answer(lambda: nb.append_note(kg.vault_scope(), note, text, long_lived=True), nb.format_write)

    @mcp.tool(annotations={"destructiveHint": False, "idempotentHint": False}, output_schema=schema_of(nb.NoteWrite))
    async def edit_note(
        note: NodeName,
        old_text: Annotated[str, Field(min_length=1, max_length=100_000, description="The exact text to replace, as read_note shows it; it must occur once (unless replace_all).")],
        new_text: Annotated[str, Field(max_length=100_000, description="The text to put in its place.")],
        replace_all: Annotated[bool, Field(description="Replace every occurrence instead of exactly one.")] = False,
    ) -> ToolResult:
        """Replace an exact string in a note, like an editor's edit tool, and update the graph. Refuses text that is missing or occurs more than once, secrets, and edits that break the frontmatter contract; never deletes a note.

        Example: edit_note(note="Payments API", old_text="FastAPI + Postgres", new_text="FastAPI + PostgreSQL 16")
        """
        return await kg.answer(lambda: nb.edit_note(kg.vault_scope(), note, old_text, new_text, replace_all, long_lived=True), nb.format_write)

    @mcp.tool(annotations={"destructiveHint": False, "idempotentHint": False}, output_schema=schema_of(nb.JournalEntry))
    async def journal_add(
        text: Annotated[str, Field(min_length=1, max_length=20_000, description="What happened; secrets are redacted before it is written.")],
        project: Annotated[str | None, Field(default=None, max_length=200, description="The project the entry is about.")] = None,
    ) -> ToolResult:
        """Append a timestamped entry to today's journal note (journal/YYYY-MM-DD.md); `recall` finds it later by date and meaning.

        Example: journal_add(text="Fixed the webhook retries (exponential backoff)", project="payments")
        """
        return await kg.answer(lambda: nb.journal_add(kg.vault_scope(), text, project), nb.format_entry)

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=schema_of(nb.Recent))
    async def recent(
        days: Annotated[float, Field(gt=0, le=3660, description="The window in days (0.5 = the last 12 hours).")] = 1.0,
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many notes and entries.")] = 50,
    ) -> ToolResult:
        """Recent activity: notes changed and journal entries written in the last N days, newest first.

        Example: recent(days=7)
        """
        return await kg.answer(lambda: nb.recent(kg.vault_scope(), days, limit), nb.format_recent)


def upkeep_tools(mcp: FastMCP, kg: KgServer) -> None:
    """For clients without hooks: update a scope's graph, lint the vault; and the doctor's report."""

    @mcp.tool(
        annotations={"destructiveHint": False, "idempotentHint": True},
        output_schema=object_schema("scope", "kind", "sources", "extracted", "removed", "nodes", "edges", "pending", "quarantined", "warnings", "notices"),
    )
    async def update(scope: ScopeName = None) -> ToolResult:
        """Bring a scope's graph up to date with its files (only what changed is re-read); clients without hooks call it after editing notes by other means.

        Example: update(scope="vault")
        """

        def work() -> ToolResult:
            [run] = api.update_runs([kg.scope(scope)], long_lived=True)
            return result(api.format_run(run, "updated"), run.as_dict())

        return await kg.call(work)

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=object_schema("scope", "notes", "problems", "skipped", "advice"))
    async def lint() -> ToolResult:
        """Check every vault note against the frontmatter contract (one-line summary, namespaced tags, a scope/ tag); one line per problem.

        Example: lint()
        """
        return await kg.answer(lambda: api.lint(kg.vault_scope().root), api.renderer("lint"))

    @mcp.tool(annotations={"readOnlyHint": True}, output_schema=object_schema("broken", "lines"))
    async def doctor(quick: Annotated[bool, Field(description="Skip the timed model call and the embedding.")] = False) -> ToolResult:
        """Whether kg works here: one line per part (kg and the plugin's launcher, config, vault, each scope built and current, the model, the embedder, the hooks and their last failures, the watcher, sync), a verdict each, and the fix for each line that fails.

        Example: doctor(quick=True)
        """
        return await kg.answer(lambda: api.doctor(kg.vault, measure=not quick), api.renderer("doctor"))


TOOL_GROUPS: list[Callable[[FastMCP, KgServer], None]] = [search_tools, graph_tools, memory_tools, note_tools, upkeep_tools, resources]


def serve(vault: Path | None = None) -> None:
    """Run the server on stdio until the client closes it."""
    from vault_kg.core.agent_hints import serve_as_mcp

    serve_as_mcp()  # hints in answers name tools and their parameters, not `kg` commands
    build_server(vault).run(show_banner=False)
