"""`kg sync` between two machines: a bare repository on disk and two clones of the vault."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from conftest import EXAMPLE_VAULT, kg_process
from episodic.journal import append_entry, read_day
from vault_kg.notes import sync as sync_mod
from vault_kg.core.errors import KgError
from vaultops_helpers import git, graph_without_root, isolate_git, snapshot, write

DAY = datetime(2025, 3, 14, 9, 30)
SMALL_VAULT = ("Home.md", "clients/Acme Corp.md", "clients/Globex.md", "inbox/Ideas Scratchpad.md", "tools/Postgres.md", "tools/RQ.md", "tools/Redis.md")


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, isolated_config: Path) -> None:
    isolate_git(monkeypatch, isolated_config)


@pytest.fixture
def machines(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(remote, laptop, vps): the laptop's vault pushed by a first sync, the VPS a clone that synced once."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    laptop = tmp_path / "laptop"
    for rel in SMALL_VAULT:
        (laptop / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(EXAMPLE_VAULT / rel, laptop / rel)
    git(laptop, "init", "-q", "-b", "main")
    git(laptop, "remote", "add", "origin", str(remote))
    first = sync_mod.sync(laptop, update_graph=False)
    assert first.pushed and first.upstream == "origin/main"
    vps = tmp_path / "vps"
    git(tmp_path, "clone", "-q", str(remote), str(vps))
    sync_mod.sync(vps, update_graph=False)
    return remote, laptop, vps


def kg_sync(vault: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return kg_process("sync", "--vault", str(vault), *extra)


def test_edits_on_both_machines_sync_and_the_graphs_agree(machines: tuple[Path, Path, Path]) -> None:
    _, laptop, vps = machines
    for vault in (laptop, vps):
        assert sync_mod.sync(vault).update["sources"] == len(SMALL_VAULT)  # each machine builds its own graph
    write(laptop, "tools/Redis.md", (laptop / "tools/Redis.md").read_text() + "\nLaptop: Redis 7.2 everywhere now.\n")
    (laptop / "inbox/Ideas Scratchpad.md").unlink()
    write(vps, "tools/Kafka.md", "---\nsummary: Kafka, evaluated for the event bus.\ntags: [tool/kafka, scope/global]\n---\n# Kafka\n\nSee [[Redis]].\n")
    write(vps, "tools/Postgres.md", (vps / "tools/Postgres.md").read_text() + "\nVPS: Postgres 16 upgrade planned.\n")

    ran = kg_sync(laptop, "--json")
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert sorted(report["committed_files"]) == ["inbox/Ideas Scratchpad.md", "tools/Redis.md"]
    message = git(laptop, "log", "-1", "--format=%B").stdout
    assert "deleted: inbox/Ideas Scratchpad.md" in message and "modified: tools/Redis.md" in message

    ran = kg_sync(vps, "--json")
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert sorted(report["pulled_files"]) == ["inbox/Ideas Scratchpad.md", "tools/Redis.md"]
    assert report["pushed"] is True
    assert "tools/Redis.md" in report["update"]["extracted"] and "inbox/Ideas Scratchpad.md" in report["update"]["removed"]

    assert kg_sync(laptop).returncode == 0
    assert snapshot(laptop) == snapshot(vps)
    assert graph_without_root(laptop) == graph_without_root(vps)
    ids = {n["id"] for n in graph_without_root(laptop)["nodes"]}
    assert "note:tools/Kafka.md" in ids and "note:inbox/Ideas Scratchpad.md" not in ids
    assert not [f for f in git(laptop, "ls-files").stdout.split("\n") if f.startswith("kg-out")]
    assert "kg-out/" in (laptop / ".gitignore").read_text().split("\n")


def test_journal_entries_from_both_machines_survive(machines: tuple[Path, Path, Path]) -> None:
    _, laptop, vps = machines
    append_entry(laptop, "Fixed webhook retries on the laptop", project="payments", now=DAY)
    append_entry(vps, "Rotated the Stripe keys from the VPS", project="ops", now=DAY.replace(hour=8))
    append_entry(vps, "Deployed the relay", project="ops", now=DAY.replace(hour=11))
    sync_mod.sync(laptop, update_graph=False)
    sync_mod.sync(vps, update_graph=False)
    sync_mod.sync(laptop, update_graph=False)
    for vault in (laptop, vps):
        entries = read_day(vault, DAY.date())
        assert [(e.time, e.project) for e in entries] == [("08:30", "ops"), ("09:30", "payments"), ("11:30", "ops")]
        assert "3 entries (ops, payments)" in (vault / "journal/2025-03-14.md").read_text()
    assert snapshot(laptop) == snapshot(vps)


def test_journal_merges_by_union_even_without_the_merge_driver(machines: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine whose driver is broken still merges journals: the rebase conflict is settled by kg."""
    _, laptop, vps = machines
    monkeypatch.setattr(sync_mod, "driver_command", lambda: "false")
    append_entry(laptop, "laptop entry", now=DAY)
    append_entry(vps, "vps entry", now=DAY.replace(minute=45))
    sync_mod.sync(laptop, update_graph=False)
    report = sync_mod.sync(vps, update_graph=False)
    assert report.journal_merged == ["journal/2025-03-14.md"]
    assert [e.text for e in read_day(vps, DAY.date())] == ["laptop entry", "vps entry"]
    assert sync_mod.status(vps).ahead == 0


def test_conflicting_edit_is_reported_and_nothing_is_lost(machines: tuple[Path, Path, Path]) -> None:
    remote, laptop, vps = machines
    rel = "tools/Redis.md"
    original = (laptop / rel).read_text()
    line = "Redis has two jobs in our stack and both are disposable: losing its data loses nothing that"
    assert line in original
    write(laptop, rel, original.replace(line, "LAPTOP: Redis has one job now."))
    write(vps, rel, original.replace(line, "VPS: Redis is going away."))
    sync_mod.sync(laptop)

    ran = kg_sync(vps, "--json")
    assert ran.returncode == 1 and ran.stderr == ""
    report = json.loads(ran.stdout)  # with --json the error is in the one JSON answer
    assert report["conflicts"] == [rel] and report["exit_code"] == 1
    assert rel in report["error"] and "rebase --continue" in report["error"] and "rebase --abort" in report["error"]
    assert "\n" not in report["error"]
    text = (vps / rel).read_text()
    assert "LAPTOP: Redis has one job now." in text and "VPS: Redis is going away." in text

    data = sync_mod.status(vps).as_dict()
    assert data["in_progress"] == "rebase" and data["conflicts"] == [rel] and data["branch"] == "main"
    with pytest.raises(KgError, match="rebase is in progress"):
        sync_mod.sync(vps)

    resolved = "\n".join(x for x in text.split("\n") if not x.startswith(("<<<<<<<", "=======", ">>>>>>>")))
    write(vps, rel, resolved)
    cont = subprocess.run(["bash", "-c", report["continue_command"] + " --json"], capture_output=True, text=True)
    assert cont.returncode == 0, cont.stderr
    assert json.loads(cont.stdout[cont.stdout.index("{") :])["pushed"] is True
    sync_mod.sync(laptop)
    for vault in (laptop, vps):
        both = (vault / rel).read_text()
        assert "LAPTOP: Redis has one job now." in both and "VPS: Redis is going away." in both
    assert graph_without_root(laptop) == graph_without_root(vps)


def test_aborting_a_conflicted_sync_restores_this_machines_version(machines: tuple[Path, Path, Path]) -> None:
    _, laptop, vps = machines
    rel = "tools/RQ.md"
    original = (laptop / rel).read_text()
    write(laptop, rel, original + "\nlaptop line\n")
    write(vps, rel, original + "\nvps line\n")
    sync_mod.sync(laptop, update_graph=False)
    with pytest.raises(sync_mod.SyncConflict) as caught:
        sync_mod.sync(vps, update_graph=False)
    subprocess.run(["bash", "-c", caught.value.report.abort_command], check=True)
    assert (vps / rel).read_text() == original + "\nvps line\n"
    assert "laptop line" in git(vps, "show", f"origin/main:{rel}").stdout


def test_status_shows_ahead_behind_and_uncommitted_notes(machines: tuple[Path, Path, Path]) -> None:
    _, laptop, vps = machines
    write(laptop, "tools/New Tool.md", "---\nsummary: x\ntags: [scope/global]\n---\n# New\n")
    ran = kg_sync(laptop, "--status", "--json")
    data = json.loads(ran.stdout)
    assert data["uncommitted"] == [{"path": "tools/New Tool.md", "change": "new"}]
    assert (data["ahead"], data["behind"]) == (0, 0)
    sync_mod.sync(laptop, update_graph=False)
    git(vps, "commit", "-q", "--allow-empty", "-m", "local only")
    data = sync_mod.status(vps).as_dict()
    assert (data["ahead"], data["behind"]) == (1, 1) and data["fetched"] is True
    assert "1 ahead · 1 behind" in kg_sync(vps, "--status").stdout


def test_sync_refuses_a_note_holding_a_secret(machines: tuple[Path, Path, Path]) -> None:
    _, laptop, _ = machines
    before = git(laptop, "rev-parse", "HEAD").stdout
    write(laptop, "runbooks/Deploy.md", "---\nsummary: deploy\ntags: [scope/global]\n---\nAWS key AKIAABCDEFGHIJKLMNOP\n")
    with pytest.raises(KgError, match=r"runbooks/Deploy.md: refused to sync: .*secret"):
        sync_mod.sync(laptop, update_graph=False)
    assert git(laptop, "rev-parse", "HEAD").stdout == before
    assert git(laptop, "diff", "--cached", "--name-only").stdout == ""


def test_sync_outside_a_repository_says_what_to_do(tmp_path: Path) -> None:
    vault = tmp_path / "plain"
    vault.mkdir()
    with pytest.raises(KgError, match="not a git repository"):
        sync_mod.sync(vault)
    ran = kg_process("sync", "--init", "--vault", str(vault))
    assert ran.returncode == 0, ran.stderr
    assert (vault / ".git").is_dir() and "kg-out/" in (vault / ".gitignore").read_text()
    assert "journal/*.md merge=kg-journal" in (vault / ".gitattributes").read_text()
    assert "merge-journal" in git(vault, "config", "merge.kg-journal.driver").stdout
