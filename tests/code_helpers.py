"""Shared helpers for the code-extraction tests: build a fixture repository's graph in memory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from extract.code import CodeAdapter
from vault_kg.core.adapter import Resolution
from vault_kg.core.model import Extraction

FIXTURES = Path(__file__).parent / "fixtures" / "code"


@dataclass
class Built:
    extractions: dict[str, Extraction]
    resolution: Resolution

    def edges(self, relation: str) -> set[tuple[str, str]]:
        return {(e["source"], e["target"]) for e in self.resolution.edges if e["relation"] == relation}

    def node(self, node_id: str) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for extraction in self.extractions.values():
            merged.update(extraction.nodes.get(node_id, {}))
        merged.update(self.resolution.nodes.get(node_id, {}))
        return merged

    def node_ids(self) -> set[str]:
        return {n for e in self.extractions.values() for n in e.nodes} | set(self.resolution.nodes)


def build(root: Path) -> Built:
    adapter = CodeAdapter()
    sources, _ = adapter.list_sources(root)
    extractions = {rel: adapter.extract(rel, (root / rel).read_bytes()) for rel in sources}
    return Built(extractions, adapter.resolve(extractions))
