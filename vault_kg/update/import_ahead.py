"""A full build imports what its ranking stage needs while the extraction workers run.

numpy (the edge table, PageRank) and igraph (Leiden) take a noticeable part of a second to
import. Imported where the ranking first needs them, they run after the last note arrived, when
the build process works alone on one core; imported as soon as the worker processes have started
(after the fork, so the workers do not carry them), the build process does it while it would
otherwise wait for their first answers.
"""

from __future__ import annotations

__all__ = ["import_ahead"]


def import_ahead() -> None:
    """Import numpy and igraph now; one that fails is left for its real import to report."""
    try:
        import numpy  # noqa: F401
        import igraph  # noqa: F401
    except ImportError:
        pass
