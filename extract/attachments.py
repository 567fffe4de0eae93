"""Vault files that are not notes (images, PDFs, canvases, audio, any attachment): nodes of their own kind.

Obsidian links and embeds any file of the vault (`![[map.png]]`, `[[spec.pdf]]`, `![](img/a.png)`).
kg lists every such file as a source whose extraction is one `attachment` node, so a link to a file
that exists resolves to it and only a target that does not exist is dangling. An attachment's
bytes are never read (a 2 GB video costs one stat), except a canvas's: a JSON Canvas file's cards
embed notes and files (`file` cards) and hold markdown with wikilinks (`text` cards), which
become the canvas's own links.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any, Callable

from vault_kg.core import model as m

from .links import Link, scan_markdown
from .redaction import redact_extraction

__all__ = ["MAX_CANVAS_BYTES", "READ_SUFFIXES", "extract_attachment", "reads_bytes"]

READ_SUFFIXES = (".canvas",)
MAX_CANVAS_BYTES = 5 * 1024 * 1024
MAX_CARDS = 5_000


def reads_bytes(relpath: str) -> bool:
    """Whether extracting this source needs its bytes (notes and canvases); other attachments need a stat."""
    return m.is_note_path(relpath) or relpath.lower().endswith(READ_SUFFIXES)


LinkRef = Callable[[str, str, Link], m.Ref]  # (node id, owner path, link) -> its reference, as a note's links are made


def extract_attachment(relpath: str, data: bytes, digest: str, link_ref: LinkRef) -> m.Extraction:
    """One attachment's node (and a canvas's links, each made by `link_ref`). Never raises: a canvas
    that is not JSON Canvas keeps its node, with a warning naming the file."""
    name = posixpath.basename(relpath)
    suffix = posixpath.splitext(name)[1].lower().lstrip(".")
    node: dict[str, Any] = {"kind": m.ATTACHMENT, "label": name, "source": relpath, "status": m.LIVE, "format": suffix}
    aid = m.attachment_id(relpath)
    extraction = m.Extraction(source=relpath, hash=digest, nodes={aid: node}, meta={"attachment": True, "size": len(data)})
    if suffix == "canvas":
        _canvas_links(relpath, aid, data, extraction, link_ref)
    return redact_extraction(extraction)


def _canvas_links(relpath: str, aid: str, data: bytes, extraction: m.Extraction, link_ref: LinkRef) -> None:
    """A canvas's file cards (embeds of the note or file they show) and its text cards' links."""
    if len(data) > MAX_CANVAS_BYTES:
        extraction.warnings.append(f"{relpath}: canvas over {MAX_CANVAS_BYTES // 1024 // 1024} MB; its cards are not read")
        return
    try:
        cards = json.loads(data.decode("utf-8-sig")).get("nodes") or []
    except (ValueError, AttributeError):
        extraction.warnings.append(f"{relpath}: not a JSON Canvas file (it does not parse); its cards are not read, re-save it from Obsidian")
        return
    for card in cards[:MAX_CARDS] if isinstance(cards, list) else []:
        if not isinstance(card, dict):
            continue
        if card.get("type") == "file" and isinstance(card.get("file"), str) and card["file"].strip():
            # a vault path, from the root: a file card shows (embeds) that note or file
            subpath = card.get("subpath")
            heading = subpath.lstrip("#").strip() if isinstance(subpath, str) and not subpath.startswith("#^") else ""
            target = "/" + card["file"].strip().lstrip("/")
            extraction.refs.append(link_ref(aid, relpath, Link(target, 1, True, heading or None, markdown=True)))
        elif card.get("type") == "text" and isinstance(card.get("text"), str):
            extraction.refs.extend(link_ref(aid, relpath, link) for link in scan_markdown(card["text"]).links)
