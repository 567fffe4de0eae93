"""Notes used by the LLM tests (their markers select the fake server's fixture answers)."""

from __future__ import annotations

import hashlib

MODEL = "qwen2.5:7b-instruct"

BASIC = """---
summary: Acme account basics.
tags: [client/acme, scope/seo]
aliases: [Acme]
---
# Acme Corp

Acme Corp is our client. FIXTURE-basic
Maria Chen works on Acme Corp.
Acme uses Semrush for keyword research, see https://example.com/secret-url for the login.
We do NOT use Redis for Acme Corp.
Elasticsearch was replaced by OpenSearch.

```python
import LeakedLibrary
```
"""


def long_note() -> str:
    """Six sections, about 10,000 characters of prose: over the 8,000 that make a note long."""
    lines = ["# Services FIXTURE-long", "", "## Alpha", "", "Alpha Service uses Kafka for events."]
    filler = "This paragraph describes operational details at some length. " * 6
    for name in ["Beta", "Gamma", "Delta", "Epsilon"]:
        lines += ["", f"## {name}"]
        for n in range(5):
            lines += ["", f"The {name} section, part {n}. " + filler]
    lines += ["", "## Zeta", ""]
    lines += ["More words about the zeta service and how it is run."] * 4
    lines.append("Zeta Service depends on Postgres for storage.")
    return "\n".join(lines) + "\n"


LOOP = """Hermes uses RabbitMQ. FIXTURE-loop
Hermes has retries.
Hermes has metrics.

Atlas stores files.
Atlas has a UI.
Atlas has quotas.
Atlas uses MinIO for blobs.
"""

ALWAYS_LOOP = "FIXTURE-always-loop: Loopy is a tool.\nIt loops.\n"
REPEATS = "FIXTURE-repeats: Echo uses Delta.\n"


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
