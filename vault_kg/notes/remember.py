"""`remember`: save a new note in the frontmatter contract, anchor it if asked, add it to the graph.

The library verb behind `kg remember` and the MCP tool `remember`. It writes through the vault's
one guarded write (`vault_write.write_note`, which never replaces a note that exists or appears
meanwhile), and does all of it or nothing: a note whose anchor cannot be made is removed again
(unless another writer changed it since).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


from vault_kg.storage.layout import Layout
from vault_kg.core.scopes import Scope

__all__ = ["format_remember", "remember_note"]


def remember_note(
    scope: Scope,
    relpath: str,
    summary: str,
    tags: list[str],
    body: str = "",
    anchor: str | None = None,
    project: str | None = None,
    long_lived: bool = False,
) -> dict[str, Any]:
    """Write the note, anchor it (`PATH::SYMBOL`, `PATH#Heading` or `[[Note]]`) and update the graph.

    Returns `{path, node, anchor, indexed, notices}`; `indexed` is False when the vault has no
    graph yet (then `kg build` adds the note). A `long_lived` caller (the MCP server) wakes the
    model worker at once; a command's worker waits for the command to exit.
    """
    from vault_kg.core.safe_write import encoded
    from vault_kg.core.vault_guard import safe_relpath
    from vault_kg.notes.vault_write import render_note, write_note

    target = safe_relpath(scope.root, relpath)
    rel = target.relative_to(scope.root.resolve()).as_posix()
    for given in (summary, body, *tags):
        encoded(given, rel)  # a non-UTF-8 byte of a command-line argument: one line, not a YAML error
    title = Path(rel).stem
    text = render_note(summary, tags, body if body.lstrip().startswith("# ") else f"# {title}\n\n{body}")
    write_note(scope.root, rel, text, create=True)
    anchored = None
    if anchor:
        from vault_kg.notes.anchor_repair import add_anchor

        try:
            anchored = add_anchor(scope, rel, anchor, project)["anchor"]
        except BaseException:
            _take_back(scope.root, target, text)
            raise
    indexed = False
    notices: list[str] = []
    if Layout(scope.out).cache_db.exists():
        from vault_kg.jobs.scope_update import update_scope

        outcome = update_scope(scope, [target], long_lived=long_lived)
        indexed = True
        notices = outcome.notices
    return {"path": rel, "node": f"note:{rel}", "anchor": anchored, "indexed": indexed, "notices": notices}


def format_remember(result: dict[str, Any]) -> str:
    anchored = result.get("anchor")
    text = f"wrote {result['path']}"
    if anchored:
        text += f", anchored to {anchored.get('note') or anchored['project'] + ':' + anchored['locator']}"
    return text + (" and added it to the graph" if result["indexed"] else "; run `kg build` to add it to the graph")


def _take_back(vault: Path, target: Path, written: str) -> None:
    """Remove the note this call wrote, unless another writer changed it since (then it stays)."""
    from vault_kg.core.safe_read import read_regular
    from vault_kg.core.safe_write import locked

    with locked(vault, [target]):
        try:
            if read_regular(target, len(written.encode("utf-8")) + 1, root=vault) == written.encode("utf-8"):
                target.unlink()
        except OSError:
            pass
