"""`kg html` and `kg export`: look at a scope's graph, or hand it to Gephi, Neo4j, Obsidian, Mermaid.

Both read the scope's `kg-out/graph.json` (written by `kg build`/`kg update`); neither rebuilds.
"""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path
from typing import Any, Optional

import typer

from vault_kg.core.errors import KgError

from vault_kg.cli.commands.options import JsonOpt, VaultOpt, emit

ScopeOption = typer.Option(None, "--scope", "-s", help="`vault` or a registered project (default: the enclosing project, else the vault).")


def graph_json_path(scope: Optional[str], vault: Optional[Path]) -> Path:
    """Where the scope's graph.json lives: `<vault>/kg-out/` or `<project>/kg-out/`."""
    from vault_kg.core.scopes import resolve_scopes

    return resolve_scopes([scope] if scope else None, vault)[0].out / "graph.json"


def load_graph(path: Path) -> dict[str, Any]:
    """The graph.json dict, or one clear line saying what to do."""
    return load_graph_and_digest(path)[0]


def load_graph_and_digest(path: Path) -> tuple[dict[str, Any], int]:
    """The graph.json dict and the CRC-32 of its bytes (graph.html records which graph it drew)."""
    import orjson

    from vault_kg.update.html_page import read_graph

    if not path.is_file():
        raise KgError(f"{path}: no graph yet; run `kg build` for this scope first")
    try:
        data, digest = read_graph(path)
    except orjson.JSONDecodeError as exc:
        raise KgError(f"{path}: not valid JSON ({exc}); run `kg build` to rewrite it") from exc
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise KgError(f"{path}: not a graph.json (no node list); run `kg build` to rewrite it")
    return data, digest


def html_command(
    scope: Optional[str] = ScopeOption,
    vault: Optional[Path] = VaultOpt,
    open_page: bool = typer.Option(False, "--open", help="Open the page in the default browser."),
    as_json: bool = JsonOpt,
) -> None:
    """Regenerate the scope's interactive, offline graph page (kg-out/graph.html) from graph.json.

    \b
    Example: kg html --vault ~/vault --open
    """
    from vault_kg.update.html_page import write_page

    source = graph_json_path(scope, vault)
    data, digest = load_graph_and_digest(source)
    target = source.with_name("graph.html")
    try:
        changed = write_page(source.parent, data, digest)  # under the lock a background render takes: one writer
    except OSError as exc:
        raise KgError(f"{target}: cannot write ({exc.strerror}); check permissions") from exc
    summary = {"path": str(target), "bytes": target.stat().st_size, "changed": changed, "nodes": len(data["nodes"]), "edges": len(data.get("edges") or [])}
    emit(summary, as_json, lambda d: f"{target}  ({d['nodes']} nodes, {d['bytes'] / 1e6:.1f} MB{'' if d['changed'] else ', unchanged'})")
    if open_page:
        webbrowser.open(target.resolve().as_uri())


def export_command(
    fmt: str = typer.Option(..., "--format", "-f", help="graphml | gexf | cypher | obsidian-canvas | mermaid"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write to this file (default: stdout)."),
    scope: Optional[str] = ScopeOption,
    vault: Optional[Path] = VaultOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Export the scope's graph for Gephi (graphml, gexf), Neo4j (cypher), Obsidian (obsidian-canvas) or Mermaid.

    \b
    Example: kg export --format obsidian-canvas --output ~/vault/graph.canvas
    """
    from graph_out.export import FORMATS, export
    from vault_kg.core.store import atomic_write

    if fmt not in FORMATS:
        raise KgError(f"unknown format '{fmt}'; use one of: {', '.join(FORMATS)}")
    data = load_graph(graph_json_path(scope, vault))
    text = export(data, fmt)
    summary: dict[str, Any] = {"format": fmt, "path": str(output) if output else None, "bytes": len(text.encode("utf-8")), "nodes": len(data["nodes"]), "edges": len(data.get("edges") or [])}
    if output is not None:
        if not output.parent.is_dir():
            raise KgError(f"{output.parent}: folder does not exist; create it or pick another --output")
        try:
            atomic_write(output, text.encode("utf-8"))
        except OSError as exc:
            raise KgError(f"{output}: cannot write ({exc.strerror}); check permissions") from exc
        emit(summary, as_json, lambda d: f"{output}  ({fmt}, {d['nodes']} nodes, {d['edges']} edges)")
    elif as_json:
        emit({**summary, "content": text}, True, str)
    else:
        sys.stdout.write(text)


def register(app: typer.Typer) -> None:
    app.command("html")(html_command)
    app.command("export")(export_command)
