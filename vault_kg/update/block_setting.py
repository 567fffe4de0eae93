"""A context variable set for the length of a `with` block.

How a caller tells the one update route how to run without a parameter threaded through every
stage: the PostToolUse hook defers whole-graph work and graph.html's render, and the background
job that finishes that work asks for the artifacts once (`vault_kg.update.ranking_policy`, `vault_kg.update.deferred_work`,
`vault_kg.jobs.html_render`).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, TypeVar

T = TypeVar("T")


@contextmanager
def setting(var: ContextVar[T], value: T) -> Iterator[None]:
    """`var` holds `value` inside the block and what it held before after it, however the block ends."""
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)
