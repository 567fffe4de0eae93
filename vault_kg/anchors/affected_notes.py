"""`kg affected` on code: the symbol named the way `kg anchor` names it, and the vault notes
anchored to it or to anything that depends on it.

A symbol may be given as its locator (`src/retry.py › class Client › method fetch`), as
`PATH::Client.fetch` (the `kg anchor --to` form), or as a bare dotted name (`Client.fetch`) when
it is unique in the scope. Vault notes come from the vault cache's `anchored` keys
(`project:locator`), read-only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vault_kg.core import model as m
from vault_kg.core.errors import KgError

__all__ = ["CODE_KINDS", "default_vault", "dotted_symbol", "vault_notes"]

CODE_KINDS = (m.CLASS, m.FUNCTION, m.METHOD, m.MODULE)


def dotted_symbol(view: Any, name: str) -> str | None:
    """The node id `PATH::A.b` or `A.b` names in a code scope; None when the form does not apply."""
    from vault_kg.anchors.spans import qualname

    path, sep, dotted = name.strip().rpartition("::")
    if not sep:
        path, dotted = "", name.strip()
    if not dotted or m.LOCATOR_SEP in dotted or (not sep and "." not in dotted):
        return None
    last = dotted.rsplit(".", 1)[-1].lower()
    found = sorted(
        nid
        for nid in view.reader.by_label(last)
        if qualname(nid) == dotted and (not path or nid.split(m.LOCATOR_SEP, 1)[0] == path.strip().lstrip("./")) and view.nodes.get(nid, {}).get("kind") in CODE_KINDS
    )
    if len(found) > 1:
        raise KgError(f"'{name}' is ambiguous in scope '{view.scope.name}': {', '.join(found[:8])}; pass PATH::{dotted} or the locator")
    return found[0] if found else None


def vault_notes(project: str, locators: list[str], vault: Path | None) -> list[dict[str, Any]]:
    """Vault notes anchored to any of these locators of `project`, each with the locator it rests on."""
    from vault_kg.anchors.anchored_index import iter_anchored, open_cache

    if vault is None:
        return []
    wanted = {f"{project}:{loc}": loc for loc in locators}
    con = open_cache(vault)
    if con is None:
        return []
    found = []
    try:
        for nid, node, _ in iter_anchored(con):
            hits = [wanted[k] for k in node.get("anchored") or () if k in wanted]
            if hits:
                found.append(
                    {
                        "id": nid,
                        "label": node.get("label"),
                        "kind": m.NOTE,
                        "relation": m.ANCHORED_TO,
                        "via": hits[0],
                        "hop": 0,
                        "source": node.get("source"),
                        "line": node.get("line"),
                        "status": node.get("status", m.LIVE),
                        "scope": "vault",
                    }
                )
    finally:
        con.close()
    return found


def default_vault() -> Path | None:
    from vault_kg.core.config import resolve_vault

    try:
        return resolve_vault()
    except KgError:
        return None
