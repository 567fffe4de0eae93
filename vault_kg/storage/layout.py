"""Where everything under a scope's `kg-out/` lives: the one place those paths are spelled.

`Layout(out)` names every file and folder kg keeps in a scope's output folder (the artifacts, the
cache, the locks, logs and markers of the jobs, the per-machine state of the memory features);
`cache_db(root)` and `is_built(root)` answer for the default folder of the scope at `root`. Only
the standard library is imported: the hooks ask these before they know there is work.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from vault_kg.core.config import OUT_DIRNAME
from vault_kg.core.errors import KgError
from vault_kg.core.store import OUT_GITIGNORE, ignored_folder

__all__ = ["GITIGNORE", "Layout", "cache_db", "claim_out", "ensure_out", "is_built", "out_dir"]

GITIGNORE = OUT_GITIGNORE


@dataclass(frozen=True)
class Layout:
    """Paths inside a scope's output folder."""

    out: Path

    @property
    def graph_json(self) -> Path:
        return self.out / "graph.json"

    @property
    def report(self) -> Path:
        return self.out / "GRAPH_REPORT.md"

    @property
    def html(self) -> Path:
        return self.out / "graph.html"

    @property
    def graph_state(self) -> Path:
        """`graph-state.js`: which graph.json is current; graph.html loads it to tell when it is behind."""
        return self.out / "graph-state.js"

    @property
    def cache(self) -> Path:
        return self.out / "cache"

    @property
    def owner(self) -> Path:
        """Which scope's artifacts this folder holds (`claim_out`)."""
        return self.out / "scope.owner"

    @property
    def cache_db(self) -> Path:
        return self.cache / "index.sqlite"

    @property
    def brief(self) -> Path:
        return self.out / "brief.json"

    @property
    def lock(self) -> Path:
        return self.out / ".lock"

    # the jobs (vault_kg.jobs): locks, markers and logs
    @property
    def html_lock(self) -> Path:
        return self.out / ".html.lock"

    @property
    def html_waiting(self) -> Path:
        return self.out / ".html.waiting"

    @property
    def html_log(self) -> Path:
        return self.out / "html.log"

    @property
    def communities_lock(self) -> Path:
        return self.out / ".communities.lock"

    @property
    def communities_waiting(self) -> Path:
        return self.out / ".communities.waiting"

    @property
    def communities_queued(self) -> Path:
        return self.out / ".communities.queued"

    @property
    def last_edit(self) -> Path:
        """Touched by every hook edit that leaves work to the background job, which waits for a
        quiet moment after it (a burst of edits is settled once)."""
        return self.out / ".last-edit"

    @property
    def communities_log(self) -> Path:
        return self.out / "communities.log"

    @property
    def model_worker(self) -> Path:
        """The model worker's folder: `worker.lock`, `worker.log`, `state.json` (and its `state.lock`)."""
        return self.out / "llm"

    @property
    def worker_lock(self) -> Path:
        return self.model_worker / "worker.lock"

    @property
    def worker_log(self) -> Path:
        return self.model_worker / "worker.log"

    @property
    def worker_state(self) -> Path:
        return self.model_worker / "state.json"

    @property
    def worker_state_lock(self) -> Path:
        return self.model_worker / "state.lock"

    @property
    def vectors(self) -> Path:
        """The passage vectors (`vault_kg.storage.vectors`): a store per embedder, the job's passage list."""
        return self.out / "vectors"

    def vector_store(self, embedder: str) -> Path:
        return self.vectors / f"{embedder}.safetensors"

    @property
    def passages(self) -> Path:
        return self.vectors / "passages.json"

    @property
    def embed_lock(self) -> Path:
        return self.out / ".embed.lock"

    @property
    def embed_waiting(self) -> Path:
        return self.out / ".embed.waiting"

    @property
    def embed_log(self) -> Path:
        return self.out / "embed.log"

    @property
    def watch_lease(self) -> Path:
        """Held by the one watcher of a vault that updates it."""
        return self.out / "watch.lock"

    # what the memory features keep per machine (never synced)
    @property
    def anchors_cache(self) -> Path:
        return self.cache / "anchors.json"

    @property
    def recall_log(self) -> Path:
        return self.out / "recall-log.jsonl"

    @property
    def push_recall(self) -> Path:
        """Push-recall's session state, one `<session>.json` each."""
        return self.out / "push-recall"

    @property
    def sync_state(self) -> Path:
        return self.out / "sync-state.json"

    @property
    def hooks_log(self) -> Path:
        return self.out / "hooks.log"

    @property
    def reconciled(self) -> Path:
        return self.out / "reconciled.stamp"

    @property
    def reconcile_started(self) -> Path:
        return self.out / "reconcile.started"


def out_dir(root: Path) -> Path:
    """The default output folder of the scope at `root`."""
    return root / OUT_DIRNAME


def cache_db(root: Path) -> Path:
    """The cache file of the scope rooted at `root` (default output folder)."""
    return Layout(out_dir(root)).cache_db


def is_built(root: Path) -> bool:
    """True when the scope at `root` has a graph (an update on an unbuilt scope would be partial)."""
    return cache_db(root).is_file()


def ensure_out(out: Path) -> None:
    """Create the output folder with its own `.gitignore`, so artifacts are never committed.

    A folder that exists but cannot be written is one clear error here, before any work (and
    before the cache could be mistaken for a corrupt one)."""
    try:
        (out / "cache").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KgError(f"{out}: cannot create the output folder ({exc.strerror}); check permissions or pass --out") from exc
    for folder in (out, out / "cache"):
        if not os.access(folder, os.W_OK | os.X_OK):
            raise KgError(f"{folder}: the output folder is read-only; make it writable (chmod u+w '{folder}') or pass --out")
    ignored_folder(out)


def claim_out(out: Path, kind: str, name: str) -> None:
    """Mark `out` as the artifacts of the `kind` scope `name`, or refuse when another kind owns it.

    A vault and a registered project in one folder would share one `kg-out/`: an update of one
    rebuilt the cache over the other's graph (found by #27's bench: `kg mcp` on that folder turned
    the project's code graph into the vault's notes). Each scope's artifacts stay its own: the
    second kind is refused with the fix, before anything is written.
    """
    from vault_kg.core.store import atomic_write

    path = Layout(out).owner
    try:
        held = path.read_text(encoding="utf-8").strip()
    except OSError:
        held = ""
    owner_kind, _, owner_name = held.partition(" ")
    if owner_kind and owner_kind != kind:
        what = "the vault's graph" if owner_kind == "vault" else f"the code graph of project '{owner_name}'"
        raise KgError(
            f"{out}: this output folder holds {what}; a vault and a project in one folder cannot share it: "
            "register the project at its own folder (`kg project remove NAME`, then `kg project add PATH`) or keep the vault elsewhere"
        )
    if held != f"{kind} {name}":
        atomic_write(path, f"{kind} {name}\n".encode())
