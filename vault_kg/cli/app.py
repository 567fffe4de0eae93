"""The `kg` command line: a thin shell over the library (engine, query, lint, config)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import typer

from vault_kg import __version__
from vault_kg.core import config as cfgmod
from vault_kg.core.errors import KgError
from vault_kg.core.scopes import Scope, resolve_scopes
from vault_kg.cli.commands.options import AsOfOpt, JsonOpt, OutOpt, ScopeOpt, StaleOpt, VaultOpt, emit

app = typer.Typer(
    name="kg",
    help='A knowledge graph over your markdown vault and code repositories, for coding agents.\n\nExample: kg build --vault ~/vault && kg query "payments retries"',
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
project_app = typer.Typer(
    help="Register project repositories (each gets its own code graph).\n\nExample: kg project add ~/src/payments --name payments && kg project list",
    no_args_is_help=True,
)
app.add_typer(project_app, name="project")


def _print_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"kg {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_print_version, help="Print the version and exit."),
) -> None:
    pass


def scopes_from(scope: Optional[list[str]], vault: Optional[Path], out: Optional[Path] = None) -> list[Scope]:
    return resolve_scopes(scope, vault, out)


def single_view(scope: Optional[list[str]], vault: Optional[Path]) -> Any:
    from vault_kg import api

    return api.open_view(scope, vault)


def _progress_runner(total_hint: bool):
    """A rich progress bar on stderr for long runs; silent for short ones and non-terminals.

    rich is imported only once a run turns out long: a one-note update should not pay for it.
    """
    state: dict[str, Any] = {}

    def callback(rel: str, done: int, total: int) -> None:
        if total < 200 or not sys.stderr.isatty():
            return
        if "bar" not in state:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            bar = Progress(TextColumn("extracting"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), TextColumn("{task.description}"), transient=True)
            bar.start()
            state["bar"] = bar
            state["task"] = bar.add_task("", total=total)
        state["bar"].update(state["task"], completed=done, description=rel[-40:])
        if done >= total:
            state["bar"].stop()

    return callback


def _run_scopes(scopes: list[Scope], paths: Optional[list[Path]], force: bool, as_json: bool, verb: str, wait: bool = False) -> None:
    from vault_kg import api

    cfg = cfgmod.load_config()
    results = []
    waited: list[dict[str, Any]] = []
    for scope in scopes:
        [result] = api.update_runs([scope], paths, force, progress=_progress_runner(True), explicit=verb == "built", long_lived=wait, cfg=cfg, draw_html=True)
        results.append(result)
        outcome = result.model_worker
        notice = api.model_notice(scope, result.pending, cfg, always=verb == "built")
        if notice:
            result.notices.append(notice)
        if wait and scope.kind == "vault" and cfg.ollama_enabled:
            from vault_kg.cli.commands.llm import wait_for_worker

            waited.append(wait_for_worker(scope, cfg, outcome or "idle"))
        for line in api.problems_of(result, scope.root):
            sys.stderr.write(line + "\n")
        if scope.kind == "code" and paths:
            _report_dirty_notes(scope, result.extracted + result.removed)
    if as_json:
        emit([{**r.as_dict(), **({"model_pass": waited[0]} if waited and r.kind == "vault" else {})} for r in results], True, str)
    else:
        _print_results(results, verb)
    if waited:
        from vault_kg.cli.commands.llm import finish_wait

        finish_wait(waited[0], as_json, next(s.out for s in scopes if s.kind == "vault"), echo=not as_json)


def _print_results(results: list[Any], verb: str) -> None:
    from vault_kg import api

    for r in results:
        sys.stdout.write(api.format_run(r, verb) + "\n")


def _report_dirty_notes(scope: Scope, relpaths: list[str]) -> None:
    """After a code edit, one line per anchored vault note that just went dirty."""
    from vault_kg import api

    for line in api.notes_dirtied(scope.name, relpaths):
        sys.stderr.write(line + "\n")


@app.command()
def build(
    vault: Optional[Path] = VaultOpt,
    out: Optional[Path] = OutOpt,
    scope: Optional[list[str]] = ScopeOpt,
    force: bool = typer.Option(False, "--force", help="Re-extract every file, ignoring the cache."),
    wait: bool = typer.Option(False, "--wait", help="Also wait for the background model pass, with a progress bar (notes/min, ETA)."),
    as_json: bool = JsonOpt,
) -> None:
    """Build a scope's graph: kg-out/graph.json, GRAPH_REPORT.md, graph.html.

    The deterministic graph lands first; a background worker then asks the local model about the
    notes it marks pending (see `kg llm status`).

    \b
    Example: kg build --vault ~/vault
    Example: kg build --vault ~/vault --wait  # and wait for the model pass, with a progress bar
    Example: kg build --scope payments  # a registered repository (or `kg build` inside it)
    """
    _run_scopes(scopes_from(scope, vault, out), None, force, as_json, "built", wait)


@app.command()
def update(
    paths: Optional[list[Path]] = typer.Argument(None, help="Only these files (as the hooks do); default: everything that changed."),
    vault: Optional[Path] = VaultOpt,
    out: Optional[Path] = OutOpt,
    scope: Optional[list[str]] = ScopeOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Re-extract only what changed (size+mtime, then content hash); rewrite nothing if nothing did.

    \b
    Example: kg update
    Example: kg update notes/payments.md  # just this note, as the hooks do
    """
    _run_scopes(scopes_from(scope, vault, out), paths or None, False, as_json, "updated")


@app.command()
def query(
    question: str = typer.Argument(..., help="What you want to know, in words."),
    budget: int = typer.Option(1500, "--budget", help="Answer size cap in tokens (100-50000)."),
    depth: int = typer.Option(2, "--depth", help="Expansion hops from the seeds (0-6)."),
    vault: Optional[Path] = VaultOpt,
    scope: Optional[list[str]] = ScopeOpt,
    include_stale: bool = StaleOpt,
    as_of: Optional[str] = AsOfOpt,
    tag: Optional[list[str]] = typer.Option(None, "--tag", help="Only hits with this tag or a child of it (repeat for any of several)."),
    folder: Optional[str] = typer.Option(None, "--folder", help="Only hits whose file lies under this folder."),
    kind: Optional[list[str]] = typer.Option(None, "--kind", help="Only these kinds: note, journal, code, entity, section, function, class... (journal days show only when asked for)."),
    since: Optional[str] = typer.Option(None, "--since", help="Only hits dated on or after this day (YYYY-MM-DD): journal day, frontmatter date, else file mtime."),
    until: Optional[str] = typer.Option(None, "--until", help="Only hits dated on or before this day (YYYY-MM-DD)."),
    as_json: bool = JsonOpt,
) -> None:
    """Answer with a compact, citable context: seeds first, file:line, snippets, connecting edges.

    \b
    Example: kg query "how do we retry failed webhooks" --budget 800
    Example: kg query "stripe" --tag client --folder services
    Example: kg query "webhooks" --kind journal --since 2024-01-01
    """
    from vault_kg import api
    from vault_kg.core.memory_kinds import make_filters

    filters = make_filters(tag, folder, kind, since, until)
    answer = api.query(question, budget=budget, depth=depth, include_stale=include_stale, as_of=as_of, filters=filters, scopes=scopes_from(scope, vault), record_as="query")
    emit(answer, as_json, api.renderer("query"))


@app.command()
def path(
    a: str = typer.Argument(..., help="Start: note title, path, alias, tag (#x) or node id."),
    b: str = typer.Argument(..., help="End."),
    vault: Optional[Path] = VaultOpt,
    scope: Optional[list[str]] = ScopeOpt,
    include_stale: bool = StaleOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Shortest meaningful path between two nodes, with edge directions.

    \b
    Example: kg path "Payments API" "Acme"
    """
    from vault_kg import api

    emit(api.path(a, b, include_stale=include_stale, view=single_view(scope, vault)), as_json, api.renderer("path"))


@app.command()
def explain(
    name: str = typer.Argument(..., help="Note title, path, alias, tag or node id."),
    vault: Optional[Path] = VaultOpt,
    scope: Optional[list[str]] = ScopeOpt,
    include_stale: bool = StaleOpt,
    as_of: Optional[str] = AsOfOpt,
    as_json: bool = JsonOpt,
) -> None:
    """A node, its attributes, its source lines and its neighbours grouped by relation.

    \b
    Example: kg explain "Payments API"
    """
    from vault_kg import api

    answer = api.explain(name, include_stale=include_stale, as_of=as_of, view=single_view(scope, vault), record_as="explain")
    emit(answer, as_json, api.renderer("explain"))


@app.command()
def neighbors(
    name: str = typer.Argument(..., help="Note title, path, alias, tag or node id."),
    relation: Optional[str] = typer.Option(None, "--relation", "-r", help="Only this relation (links_to, tagged, calls, imports, anchored_to, ...)."),
    direction: str = typer.Option("both", "--direction", "-d", help="out: what it points to; in: what points to it; both."),
    limit: int = typer.Option(50, "-n", "--limit", min=1, max=500, help="At most this many neighbours (1-500)."),
    vault: Optional[Path] = VaultOpt,
    scope: Optional[list[str]] = ScopeOpt,
    include_stale: bool = StaleOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The nodes directly connected to a node: relation, direction, confidence and line of each edge.

    \b
    Example: kg neighbors "Payments API" --direction in --relation links_to
    """
    from vault_kg import api

    if direction not in ("in", "out", "both"):
        raise KgError(f"--direction {direction!r}: use in, out or both")
    answer = api.neighbors(name, relation=relation, direction=direction, limit=limit, include_stale=include_stale, view=single_view(scope, vault))
    emit(answer, as_json, api.renderer("neighbors"))


@app.command("god-nodes")
def god_nodes(
    n: int = typer.Option(10, "-n", min=1, max=200, help="How many (1-200)."),
    vault: Optional[Path] = VaultOpt,
    scope: Optional[list[str]] = ScopeOpt,
    include_stale: bool = StaleOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The most central nodes (weighted PageRank; tags, files and tests excluded).

    \b
    Example: kg god-nodes -n 5
    """
    from vault_kg import api

    emit(api.god_nodes(n=n, include_stale=include_stale, view=single_view(scope, vault)), as_json, api.renderer("god_nodes"))


@app.command()
def affected(
    symbol: str = typer.Argument(..., help="Symbol locator, name, note title or node id."),
    depth: int = typer.Option(3, "--depth", help="How many hops of dependants (1-6)."),
    budget: Optional[int] = typer.Option(None, "--budget", min=100, max=50_000, help="Cap the answer at about this many tokens: anchored notes first, then the closest dependants."),
    vault: Optional[Path] = VaultOpt,
    scope: Optional[list[str]] = ScopeOpt,
    include_stale: bool = StaleOpt,
    as_json: bool = JsonOpt,
) -> None:
    """What depends on a symbol (anchored vault notes first, then callers, importers, subclasses, closest first): the blast radius.

    \b
    Example: kg affected "src/retry.py › class Client › method fetch" --scope payments --depth 2
    Example: kg affected src/retry.py::Client.fetch --scope payments --budget 800  # as `kg anchor` names it; anchored notes first
    """
    from vault_kg import api

    emit(api.affected(symbol, vault=vault, depth=depth, include_stale=include_stale, view=single_view(scope, vault), budget=budget), as_json, api.renderer("affected"))


@app.command()
def stats(vault: Optional[Path] = VaultOpt, scope: Optional[list[str]] = ScopeOpt, as_json: bool = JsonOpt) -> None:
    """Counts for a scope: sources, nodes, edges, unresolved, quarantined, stale, pending.

    \b
    Example: kg stats --json
    """
    from vault_kg import api

    emit(api.stats(view=single_view(scope, vault)), as_json, api.renderer("stats"))


@app.command()
def lint(
    vault: Optional[Path] = VaultOpt,
    strict: bool = typer.Option(False, "--strict", help="Exit 1 on any violation (for CI on the vault repo)."),
    fix: bool = typer.Option(False, "--fix", help="Quote property values that break the YAML (`summary: a: b`); prints each change."),
    show_all: bool = typer.Option(False, "--all", help="List every finding (by default at most 20 of each kind)."),
    as_json: bool = JsonOpt,
) -> None:
    """Check the vault: properties that do not parse, quarantined notes, and the frontmatter
    contract (one-line summary, namespaced tags, a scope/ tag). Counts first.

    \b
    Example: kg lint --strict
    Example: kg lint --fix
    """
    from vault_kg import api

    report = api.lint(vault, fix=fix, show_all=show_all)
    emit(report, as_json, api.renderer("lint"))
    if strict and report["problems"]:
        raise typer.Exit(1)


@app.command()
def init(
    vault: Optional[Path] = typer.Option(None, "--vault", help="Vault folder to record."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing config file."),
    as_json: bool = JsonOpt,
) -> None:
    """Write a commented config file (KG_CONFIG, else ~/.config/vault-kg/config.toml).

    \b
    Example: kg init --vault ~/vault
    """
    from vault_kg.core.store import atomic_write

    path = cfgmod.config_path()
    if path.exists() and not force:
        raise KgError(f"{path}: already exists; edit it, or pass --force to overwrite")
    vault_str = str(vault.expanduser().resolve()) if vault else ""
    text = cfgmod.CONFIG_TEMPLATE.format(vault=vault_str.replace("\\", "\\\\"), host=cfgmod.DEFAULT_OLLAMA_HOST, model=cfgmod.DEFAULT_MODEL)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode())
    emit({"config": str(path), "vault": vault_str}, as_json, lambda d: f"wrote {d['config']}")


@project_app.command("add")
def project_add(
    path: Path = typer.Argument(..., help="The repository folder."),
    name: Optional[str] = typer.Option(None, "--name", help="Scope name (default: the folder name)."),
    as_json: bool = JsonOpt,
) -> None:
    """Register a repository as a scope in the config file.

    \b
    Example: kg project add ~/src/payments --name payments
    """
    from vault_kg.core.projects import add_project

    emit(add_project(path, name), as_json, lambda d: f"registered {d['name']} → {d['path']} in {d['config']}")


@project_app.command("remove")
def project_remove(
    name: str = typer.Argument(..., help="The project's scope name, as `kg project list` shows it."),
    as_json: bool = JsonOpt,
) -> None:
    """Unregister a project; its repository and its kg-out/ folder are left as they are.

    Example: kg project remove payments
    """
    from vault_kg.core.projects import remove_project

    emit(remove_project(name), as_json, lambda d: f"unregistered {d['name']} ({d['path']}) from {d['config']}; its graph stays in {d['artifacts']} until you delete it")


@project_app.command("list")
def project_list(as_json: bool = JsonOpt) -> None:
    """List registered projects.

    \b
    Example: kg project list
    """
    cfg = cfgmod.load_config()
    rows = [{"name": n, "path": str(p)} for n, p in sorted(cfg.projects.items())]
    emit(rows, as_json, lambda rs: "\n".join(f"{r['name']}\t{r['path']}" for r in rs) or "no projects registered; `kg project add PATH`")


def _register_features() -> None:
    """Feature packages add their own commands, in this order (imported here, by name, not from strings)."""
    from vault_kg.cli.commands import agent
    from vault_kg.cli.commands import anchors
    from vault_kg.cli.commands import doctor
    from vault_kg.cli.commands import journal
    from vault_kg.cli.commands import llm
    from vault_kg.cli.commands import memory
    from vault_kg.cli.commands import notes
    from vault_kg.cli.commands import vaultops
    from vault_kg.cli.commands import view
    from vault_kg.cli.commands import watch

    for module in (journal, view, anchors, vaultops, agent, llm, notes, memory, watch, doctor):
        module.register(app)


_register_features()


def _keep_example_lines(command: Any) -> None:
    """Mark each help paragraph that holds an example with click's `\\b`, so it is not rewrapped."""
    if command.help:
        paragraphs = command.help.split("\n\n")
        command.help = "\n\n".join("\b\n" + para if any(line.strip().startswith("Example") for line in para.splitlines()) and not para.startswith("\b") else para for para in paragraphs)
    for sub in getattr(command, "commands", {}).values():
        _keep_example_lines(sub)


def _wants_json(argv: list[str]) -> bool:
    return "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv


def _error(message: str, code: int, as_json: bool) -> int:
    """The one place a failed command reports: `{"error": ...}` on stdout with --json, else stderr."""
    if as_json:
        sys.stdout.write(json.dumps({"error": message, "exit_code": code}, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"kg: error: {message}\n")
    return code


def main(argv: list[str] | None = None) -> int:
    import click

    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(argv)
    command = typer.main.get_command(app)
    _keep_example_lines(command)
    try:
        code = command.main(args=argv, prog_name="kg", standalone_mode=False)
    except KgError as exc:
        return _error(str(exc), exc.exit_code, as_json)
    except (typer.Exit, click.exceptions.Exit) as exc:
        return exc.exit_code
    except SystemExit as exc:
        return int(exc.code or 0)
    except KeyboardInterrupt:
        sys.stderr.write("kg: interrupted\n")
        return 130
    except click.exceptions.ClickException as exc:  # usage errors: a bad option, -n 0, a missing argument
        if as_json:
            return _error(exc.format_message(), exc.exit_code, True)
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        return 1
    return code if isinstance(code, int) else 0
