"""A small vault where every note links to many others, so a query's edges block is long.

Used by the `--budget` tests and `bench/query_budget.py`: with few hits and many edges among them,
an answer that forgot to count its edges would overshoot its budget.
"""

from __future__ import annotations

from pathlib import Path


def write_dense_vault(root: Path, notes: int = 40, links: int = 12) -> Path:
    """`notes` notes about webhook retries, each linking to the next `links` notes (wrapping round)."""
    (root / "notes").mkdir(parents=True, exist_ok=True)
    for i in range(notes):
        targets = " ".join(f"[[Webhook retry {(i + k) % notes}]]" for k in range(1, links + 1))
        (root / "notes" / f"Webhook retry {i}.md").write_text(
            f"---\nsummary: Webhook retry policy number {i} for failed payment webhooks\n"
            f"tags: [topic/payments, scope/global]\n---\n# Webhook retry {i}\n\n"
            f"Retries of failed webhooks back off exponentially. See {targets}.\n",
            encoding="utf-8",
        )
    return root
