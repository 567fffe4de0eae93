"""Precision / recall / F1 of extracted entities and relations against hand-made gold.

Micro-averaged over notes. A predicted name counts as a gold entity when its canonical form equals
the gold name's or one of the gold aliases' (so "Acme" finds "Acme Corp" when the gold says so).
Relations are scored three ways: untyped (unordered pair of ends), directed (ordered pair) and
typed (ordered pair + relation name). Duplicates collapse: a fact is found or not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .entities import canonical_name

METRICS = ("entities", "entities_typed", "relations_untyped", "relations_directed", "relations_typed")


@dataclass
class PRF:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, gold: set[Any], predicted: set[Any]) -> None:
        self.tp += len(gold & predicted)
        self.fp += len(predicted - gold)
        self.fn += len(gold - predicted)

    def as_dict(self) -> dict[str, float | int]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": round(self.precision, 3),
            "recall": round(self.recall, 3),
            "f1": round(self.f1, 3),
        }


def _name_map(gold: dict[str, Any]) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for entity in gold.get("entities", []):
        canonical = canonical_name(entity["name"])
        for name in [entity["name"], *entity.get("aliases", [])]:
            mapping.setdefault(canonical_name(name), canonical)
    return mapping


def _sets(doc: dict[str, Any], names: dict[str, str]) -> dict[str, set[Any]]:
    def key(name: str) -> str:
        canonical = canonical_name(name)
        return names.get(canonical, canonical)

    entities = {key(e["name"]) for e in doc.get("entities", [])}
    typed = {(key(e["name"]), e.get("type")) for e in doc.get("entities", [])}
    directed = {(key(r["source"]), key(r["target"])) for r in doc.get("relations", [])}
    return {
        "entities": entities,
        "entities_typed": typed,
        "relations_untyped": {frozenset(pair) for pair in directed},
        "relations_directed": directed,
        "relations_typed": {(key(r["source"]), r["relation"], key(r["target"])) for r in doc.get("relations", [])},
    }


def score(pairs: Iterable[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, PRF]:
    """Micro-averaged scores over ``(gold, predicted)`` documents (entities + relations each)."""
    totals = {metric: PRF() for metric in METRICS}
    for gold, predicted in pairs:
        names = _name_map(gold)
        gold_sets, predicted_sets = _sets(gold, names), _sets(predicted, names)
        for metric in METRICS:
            totals[metric].add(gold_sets[metric], predicted_sets[metric])
    return totals
