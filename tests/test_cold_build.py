"""The cold build's fast paths give the same answer as the slow ones, and a killed build leaves
nothing behind: extraction in worker processes against one process, the one-scan redaction
against redacting every string, and SIGKILL in the middle of a worker-pool build."""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from extract import redaction
from extract.notes import extract_note
from robust_corpus import canonical, first_difference
from vault_kg.update import engine, stages
from vault_kg.update import extract_pool
from vault_kg.core import model as m
from vault_kg.core import secrets
from vault_kg.core.secrets import redact, redact_data
from vault_kg.core.scopes import Scope, vault_scope

REPO = Path(__file__).resolve().parents[1]
NOTES = extract_pool.MIN_SOURCES + 100


def generate_vault(root: Path, notes: int, seed: int = 7) -> None:
    spec = importlib.util.spec_from_file_location("gen_vault", REPO / "bench" / "gen_vault.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.generate(root, notes, seed)


@pytest.fixture
def no_runner_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build forks workers only from a single-threaded process; pytest-xdist's worker keeps a
    thread of its own (execnet), which these tests are not about."""
    import threading

    monkeypatch.setattr(threading, "active_count", lambda: 1)


def test_worker_processes_build_exactly_what_one_process_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_runner_threads: None) -> None:
    vault = tmp_path / "vault"
    generate_vault(vault, NOTES)
    (vault / "area00" / "Broken yaml.md").write_text("---\nsummary: [oops\n---\nbody\n")
    (vault / "area00" / "Binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR")
    (vault / "area00" / "Leaky.md").write_text("---\nsummary: key AKIAIOSFODNN7EXAMPLE\ntags: [ghp_abcdefghijklmnopqrstuvwxyz0123456789]\n---\n# Leaky\n\nSee [[sk-ant-abcdefghijklmnopqrstuvwxyz]].\n")
    used: list[int] = []
    real = stages.extracted

    def spy(adapter: Any, root: Path, rels: list[str], workers: int) -> Any:
        used.append(workers)
        return real(adapter, root, rels, workers)

    monkeypatch.setattr(stages, "extracted", spy)
    ahead: list[str] = []
    monkeypatch.setattr(stages, "import_ahead", lambda: ahead.append(os.environ["KG_EXTRACT_WORKERS"]))
    scope = vault_scope(vault)
    outputs = {}
    for workers in ("2", "1"):
        monkeypatch.setenv("KG_EXTRACT_WORKERS", workers)
        out = tmp_path / f"out-{workers}"
        result = engine.run(Scope(scope.name, scope.kind, scope.root, out.resolve()))
        assert result.sources == NOTES + 3
        outputs[workers] = canonical(out)
    assert used == [2], "the first build should have extracted in two worker processes"
    assert ahead == ["2"], "the ranking's imports are done ahead once, while the workers extract"
    assert outputs["2"] == outputs["1"], first_difference(outputs["2"], outputs["1"])
    assert "AKIAIOSFODNN7EXAMPLE" not in str(outputs["2"]) and "ghp_abc" not in str(outputs["2"])
    assert any(n.get("status") == m.QUARANTINED for n in outputs["2"]["graph"]["nodes"])
    assert any(n.get("frontmatter_error") for n in outputs["2"]["graph"]["nodes"])


def test_a_small_or_threaded_build_stays_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from extract.notes import VaultAdapter

    monkeypatch.setenv("KG_EXTRACT_WORKERS", "2")
    assert extract_pool.worker_count(extract_pool.MIN_SOURCES - 1, VaultAdapter()) == 1
    assert extract_pool.worker_count(extract_pool.MIN_SOURCES, object()) == 1  # an adapter that did not opt in
    monkeypatch.setattr(extract_pool.threading, "active_count", lambda: 3)  # e.g. inside the MCP server
    assert extract_pool.worker_count(extract_pool.MIN_SOURCES, VaultAdapter()) == 1


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        kids += [int(k) for k in task.read_text().split()]
    return kids


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the process tree from /proc")
def test_killed_cold_build_leaves_no_artifact_and_no_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    generate_vault(vault, NOTES * 3)
    env = {**os.environ, "KG_EXTRACT_WORKERS": "2", "KG_HTML": "off"}
    proc = subprocess.Popen([sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "build", "--vault", str(vault)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 120
    workers: list[int] = []
    while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
        workers = _children(proc.pid)
        time.sleep(0.01)
    assert len(workers) >= 2, "the build never started its extraction workers"
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL
    gone_by = time.monotonic() + 10
    while any(Path(f"/proc/{w}").exists() and "Z" not in Path(f"/proc/{w}/stat").read_text().split()[2] for w in workers) and time.monotonic() < gone_by:
        time.sleep(0.1)
    alive = [w for w in workers if Path(f"/proc/{w}").exists() and "Z" not in Path(f"/proc/{w}/stat").read_text().split()[2]]
    assert not alive, f"extraction workers {alive} outlived the killed build"
    out = vault / "kg-out"
    assert not [p.name for p in out.iterdir() if p.name in ("graph.json", "GRAPH_REPORT.md", "brief.json")], "a killed cold build left artifacts"
    scope = vault_scope(vault)
    engine.run(scope)  # the next run builds from the files; compared with a build in one process
    assert sorted(p.name for p in (out / "cache").iterdir() if p.name.startswith("index.sqlite")) in (["index.sqlite"], ["index.sqlite", "index.sqlite-shm", "index.sqlite-wal"])
    fresh = tmp_path / "fresh"
    monkeypatch.setenv("KG_EXTRACT_WORKERS", "1")
    engine.run(Scope(scope.name, scope.kind, scope.root, fresh.resolve()), force=True)
    assert canonical(out) == canonical(fresh)


def _walk_everything(extraction: m.Extraction) -> m.Extraction:
    """Redaction string by string, every string (what `redact_extraction` did before its one-scan check)."""
    extraction.nodes = {redaction._id(nid): redaction._attrs(attrs) for nid, attrs in extraction.nodes.items()}
    extraction.edges = [redaction._edge(edge) for edge in extraction.edges]
    extraction.refs = [redaction._ref(ref) for ref in extraction.refs]
    extraction.meta = redact_data(dict(extraction.meta))
    extraction.text = redact(extraction.text)
    extraction.warnings = [redact(w) for w in extraction.warnings]
    return extraction


SECRETS = [
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_" + "a1" * 20,
    "sk-ant-" + "x" * 24,
    "xoxb-1234567890-abcdef",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijk",
    "postgres://admin:hunter2hunter2@db.example.com/app",
    "API_KEY=0123456789abcdef",
    "ſecret_token: abcdefgh12345",
]


def _note(rng: random.Random) -> str:
    def maybe() -> str:
        return rng.choice(SECRETS) if rng.random() < 0.3 else rng.choice(["plain", "auth token", "Payments", "K Kelvin", "café"])

    return (
        f"---\nsummary: {maybe()}\ntags: [topic/{maybe().split()[0].replace(':', '')}, client/acme]\nowner: {maybe()}\nlinks: [{maybe()}]\n---\n"
        f"# Title {maybe()}\n\n## Heading {maybe()}\n\nSee [[{maybe()}]] and [x](docs/{maybe().split()[0]}.md) #tag/{maybe().split()[0]}\n{maybe()}\n"
    )


def test_one_scan_redaction_equals_redacting_every_string() -> None:
    rng = random.Random(18)
    checked = 0
    for i in range(400):
        data = _note(rng).encode()
        rel = f"n{i}.md"
        fast = extract_note(rel, data)
        original = redaction.redact_extraction
        redaction_module = sys.modules["extract.notes"]
        redaction_module.redact_extraction = lambda e: e
        try:
            raw = extract_note(rel, data)
        finally:
            redaction_module.redact_extraction = original
        slow = _walk_everything(raw)
        assert (fast.nodes, fast.edges, [vars(r) for r in fast.refs], fast.meta, fast.text) == (slow.nodes, slow.edges, [vars(r) for r in slow.refs], slow.meta, slow.text), data
        checked += any(s.split("=")[-1][:12] in data.decode() for s in SECRETS)
    assert checked > 100


def test_fast_trigger_agrees_with_the_case_blind_one() -> None:
    rng = random.Random(5)
    pieces = ["auth", "AUTH", "Auth", "tok", "en", "TOK", "EN", "orization", "access", "sk-", "SK_LIVE_", "://", "ya29.", "xoxb-", "K", "ſ", "İ", "é", " ", "a", "Z", "_", "-", "api", "KEY", "passw"]
    for _ in range(8000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        assert secrets.may_hold_secret(text) == bool(secrets._TRIGGER.search(text)), text
        hits = secrets.trigger_starts(text)
        assert bool(hits) == bool(secrets._TRIGGER.search(text)) and all(secrets._TRIGGER.match(text, i) for i in hits), text
    for word in secrets._TRIGGER_WORDS:
        assert secrets._TRIGGER.fullmatch(word) and secrets._TRIGGER_LOWER.fullmatch(word), word
    for word in secrets._TRIGGER_CASED:
        assert secrets._TRIGGER.fullmatch(word) and not secrets._TRIGGER.fullmatch(word.lower()), word


def test_the_trigger_lets_every_secret_through(monkeypatch: pytest.MonkeyPatch) -> None:
    """`auth` and `token` trigger the rules only in the spellings a rule can match: every string
    the rules redact with the trigger skipped is redacted the same with it."""
    rng = random.Random(11)
    pieces = [
        "Authorization",
        "authorization",
        "AUTHORIZATION",
        "auth",
        "Auth",
        "AUTH",
        "token",
        "Token",
        "TOKEN",
        "access",
        "ACCESS",
        "_",
        "-",
        ".",
        ": ",
        ":",
        "=",
        " ",
        "\n",
        "  ",
        "export ",
        "MY",
        "my",
        "bearer ",
        "Bearer ",
        "basic ",
        "x",
        "key",
        "KEY",
        "api",
        "secret",
        "SECRET",
        "PASS",
        "pass",
        "word",
        "WORD",
        "client",
        "ya29.",
        "AIza",
        "abcdEFGH12345678",
        "0123456789abcdefXYZ",
        "${VAR}",
        "<your-token>",
        "hunter2hunter2",
        '"',
        "'",
        "K",
        "ſ",
        "İ",
        "é",
    ]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(30000)]
    texts += SECRETS + [
        "AUTH_HEADER=abcdef123456",
        "GITHUB_TOKEN=ghx123456789",
        "auth_token: abcdef123456",
        "access_token=abcd1234efgh",
        "  authtoken = 'abcdefgh1234'",
        "Authorization: Bearer abcdefgh12345678",
        "AUTHORIZATION: token abcdefgh12345678",
        "x MY_TOKEN=abcdefgh123 y",
        "export API_AUTH=s3cr3tvalue",
    ]
    expected = [secrets._spans(t) for t in texts]
    assert sum(map(bool, expected)) > 300
    monkeypatch.setattr(secrets, "may_hold_secret", lambda text: True)
    assert [secrets._spans(t) for t in texts] == expected


def test_no_worker_processes_to_be_had_builds_in_this_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_runner_threads: None) -> None:
    import multiprocessing

    asked: list[int] = []

    class NoFork:
        def Pool(self, workers: int, **kwargs: Any) -> Any:
            asked.append(workers)
            raise OSError(11, "Resource temporarily unavailable")

    vault = tmp_path / "vault"
    generate_vault(vault, NOTES)
    monkeypatch.setenv("KG_EXTRACT_WORKERS", "2")
    real = multiprocessing.get_context
    monkeypatch.setattr(multiprocessing, "get_context", lambda method: NoFork())
    scope = vault_scope(vault)
    result = engine.run(scope)
    assert asked == [2] and result.sources == NOTES and len(result.extracted) == NOTES
    monkeypatch.setattr(multiprocessing, "get_context", real)
    monkeypatch.setenv("KG_EXTRACT_WORKERS", "1")
    fresh = tmp_path / "fresh"
    engine.run(Scope(scope.name, scope.kind, scope.root, fresh.resolve()), force=True)
    assert canonical(scope.out) == canonical(fresh), first_difference(canonical(scope.out), canonical(fresh))


def test_a_reference_pickles_as_its_fields() -> None:
    """What the extraction workers send back: every reference loads equal, in every protocol."""
    import pickle

    refs = [m.Ref("note:a.md", "B", "links_to"), m.Ref("note:a.md", "C#H", "links_to", 7, {"heading": "H", "key": "c", "written": None})]
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        loaded = pickle.loads(pickle.dumps(refs, protocol=protocol))
        assert loaded == refs and all(type(r) is m.Ref for r in loaded)
    assert m.Ref.__reduce__(refs[1]) == (m.Ref, ("note:a.md", "C#H", "links_to", 7, refs[1].attrs))
