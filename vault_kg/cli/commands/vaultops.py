"""`kg sync`, `kg merge-journal`, `kg promote`, `kg consolidate`: keeping the vault healthy.

Thin shells over vault_kg.notes.sync, vault_kg.notes.journal_merge, vault_kg.notes.promote and
vault_kg.notes.consolidate; every write into the vault goes through vault_kg.notes.vault_write.write_note.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from vault_kg.cli.commands.options import JsonOpt, VaultOpt, emit, vault_root


def sync_command(
    status: bool = typer.Option(False, "--status", help="Show ahead/behind and uncommitted notes; change nothing."),
    init: bool = typer.Option(False, "--init", help="Set the vault up for syncing (git init if needed, ignore kg-out/, journal merge driver)."),
    no_fetch: bool = typer.Option(False, "--no-fetch", help="With --status: do not contact the remote."),
    no_update: bool = typer.Option(False, "--no-update", help="Do not update this machine's graph after pulling."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Sync the vault through git: commit notes changed here, pull --rebase, push, update the graph.

    Conflicting edits to a note are never resolved for you: kg names the files and prints the
    commands to continue or abort. Journal notes merge by union of entries.

    \b
    Example: kg sync --init --vault ~/vault  # once per machine
    Example: kg sync --status
    Example: kg sync
    """
    from vault_kg.notes import sync as s

    root = vault_root(vault)
    if status:
        emit(s.status(root, fetch=not no_fetch).as_dict(), as_json, s.format_status)
        return
    if init:
        repo, notices = s.setup(root, init=True)
        if not repo.git("remote").stdout.split():
            ready = {"vault": str(root), "notices": notices + [f"{root} is ready to sync; add a remote (git remote add origin URL), then kg sync"]}
            emit(ready, as_json, lambda d: "\n".join(d["notices"]))
            return
    try:
        report = s.sync(root, update_graph=not no_update)
    except s.SyncConflict as conflict:
        if not as_json:
            raise
        emit({**conflict.report.as_dict(), "error": str(conflict), "exit_code": conflict.exit_code}, True, str)
        raise typer.Exit(conflict.exit_code) from conflict
    emit(report.as_dict(), as_json, s.format_report)


def merge_journal_command(
    base: Path = typer.Argument(..., help="%O: the common ancestor's version (a temp file git gives)."),
    ours: Path = typer.Argument(..., help="%A: our version; the merged result is written here."),
    theirs: Path = typer.Argument(..., help="%B: their version."),
    name: Optional[str] = typer.Argument(None, help="%P: the note's path in the vault (for its date)."),
) -> None:
    """Git merge driver for journal notes: keep every entry of both sides (set up by `kg sync`).

    \b
    Example: git config merge.kg-journal.driver "kg merge-journal %O %A %B %P"
    """
    from vault_kg.core.errors import KgError
    from vault_kg.notes.gitops import run_git
    from vault_kg.notes.journal_merge import merge_day
    from vault_kg.core.store import atomic_write

    from vault_kg.core.safe_read import read_regular

    try:
        texts = [read_regular(p, 64 * 1024 * 1024).decode("utf-8") if p.exists() else "" for p in (base, ours, theirs)]
    except UnicodeDecodeError as exc:
        proc = run_git(ours.parent, "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", str(ours), str(base), str(theirs), check=False)
        if proc.returncode != 0:
            raise KgError(f"{name or ours}: not UTF-8 text; left with conflict markers for you to resolve") from exc
        return
    atomic_write(ours, merge_day(*texts, name=name).encode("utf-8"))


def promote_command(
    entity: Optional[str] = typer.Argument(None, help="What to promote: a label, tag (#topic/x), note path or id from --suggest."),
    suggest: bool = typer.Option(False, "--suggest", help="List what recurs across client/project scopes, with evidence."),
    min_scopes: int = typer.Option(3, "--min", help="How many different client/project scopes make something recurring."),
    path: Optional[str] = typer.Option(None, "--path", help="Vault-relative path for the draft (default: global/<Label>.md)."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Propose and draft `scope/global` notes for knowledge that recurs across clients and projects.

    The draft links back to every piece of evidence; the client notes are never changed.

    \b
    Example: kg promote --suggest --min 3
    Example: kg promote "Payments API" --min 2  # what recurs in two client scopes
    """
    from vault_kg.notes import promote as p
    from vault_kg.core.errors import KgError
    from vault_kg.core.scopes import vault_scope

    scope = vault_scope(vault)
    if suggest or entity is None:
        if entity is not None:
            raise KgError("give either --suggest or an ENTITY to promote, not both")
        emit([c.as_dict() for c in p.suggest(scope, min_scopes)], as_json, p.format_suggestions)
        return
    result = p.promote(scope, entity, min_scopes, path)
    emit(result, as_json, p.format_promoted)


def consolidate_command(
    plan: bool = typer.Option(False, "--plan", help="Write a reviewable plan (changes nothing)."),
    apply: Optional[Path] = typer.Option(None, "--apply", help="Perform exactly the actions in this plan file (markdown or JSON)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="With --plan: write the markdown plan here (default: print it)."),
    similarity: float = typer.Option(0.6, "--similarity", help="Body shingle Jaccard from which two notes count as near-duplicates."),
    max_lines: int = typer.Option(400, "--max-lines", help="Notes longer than this are proposed for splitting."),
    no_commit: bool = typer.Option(False, "--no-commit", help="With --apply: do not make the git commit."),
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Plan vault tidying (merges, frontmatter fixes, orphans, dangling links, splits), then apply it.

    \b
    Example: kg consolidate --plan --output ~/plan.md && kg consolidate --apply ~/plan.md
    """
    from vault_kg.notes import consolidate as c
    from vault_kg.core.errors import KgError
    from vault_kg.core.store import atomic_write

    root = vault_root(vault)
    if plan == (apply is not None):
        raise KgError("give exactly one of --plan or --apply PLAN (example: kg consolidate --plan --output plan.md)")
    if apply is not None:
        result = c.apply(root, apply, commit=not no_commit)
        emit(result, as_json, c.format_applied)
        return
    data = c.plan(root, similarity=similarity, max_lines=max_lines)
    if output is not None:
        target = output.expanduser().resolve()
        if target.is_relative_to(root) and not target.is_relative_to(root / "kg-out"):
            raise KgError(f"{output}: the plan is not a note; write it outside the vault or under kg-out/")
        is_json = target.suffix.lower() == ".json"
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n" if is_json else c.render_markdown(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, text.encode("utf-8"))
        emit(data, as_json, lambda d: c.format_plan_summary(d, output))
        return
    emit(data, as_json, c.render_markdown)


def register(app: typer.Typer) -> None:
    """Add `kg sync`, `kg merge-journal`, `kg promote` and `kg consolidate` to the main app."""
    app.command("sync")(sync_command)
    app.command("merge-journal")(merge_journal_command)
    app.command("promote")(promote_command)
    app.command("consolidate")(consolidate_command)
