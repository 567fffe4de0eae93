"""`kg promote`: what recurs across three client notes is proposed, and drafted, as a global note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import kg_process
from extract.notes import extract_note
from vault_kg.notes import promote as p
from vault_kg.update.engine import run
from vault_kg.core.errors import KgError
from vault_kg.notes.lint import check_note
from vault_kg.core.scopes import vault_scope
from vaultops_helpers import note, snapshot, write

FACT = "Always send an idempotency key on every write to the payment provider."
CLIENTS = ("acme", "globex", "initech")


def _client_body(name: str, padding: int) -> str:
    filler = "\n".join(f"Detail {i} about {name}." for i in range(padding))
    return f"# {name.title()}\n\n{filler}\n\n- {FACT}\n- Retries follow the [[Retry Policy]] #topic/retries\n- Hosting is on {name}'s own servers.\n"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for i, name in enumerate(CLIENTS):
        write(root, f"clients/{name}.md", note(f"{name} billing", [f"client/{name}", f"scope/{name}", "topic/payments"], _client_body(name, i)))
    write(root, "projects/portal.md", note("portal project", ["scope/portal"], f"# Portal\n\n{FACT}\n"))
    write(root, "tools/Stripe.md", note("Stripe", ["scope/global", "tool/stripe"], f"# Stripe\n\n{FACT}\n[[Retry Policy]]\n"))
    write(root, "clients/acme-extra.md", note("acme extra", ["client/acme"], "# Acme extra\n\nOnly in acme and globex: [[Shared Thing]].\n"))
    write(root, "clients/globex-extra.md", note("globex extra", ["client/globex"], "# Globex extra\n\n[[Shared Thing]] again.\n"))
    run(vault_scope(root))
    return root


def test_suggest_finds_the_fact_link_and_tag_recurring_in_three_client_scopes(vault: Path) -> None:
    candidates = p.suggest(vault_scope(vault), 3)
    found = {c.kind: c for c in candidates if c.kind != "statement"}
    statement = next(c for c in candidates if c.kind == "statement" and FACT in c.label)
    assert candidates[0] is statement  # four scopes: ranked first
    assert statement.scopes == ["acme", "globex", "initech", "portal"]
    lines = {(e.note, e.line) for e in statement.evidence}
    for name in CLIENTS:
        expected = (vault / f"clients/{name}.md").read_text().split("\n").index(f"- {FACT}") + 1
        assert (f"clients/{name}.md", expected) in lines
    assert all(FACT in e.text for e in statement.evidence)
    assert "tools/Stripe.md" not in {e.note for e in statement.evidence}  # already global: not evidence
    assert found["unresolved"].label == "Retry Policy" and found["unresolved"].scopes == list(CLIENTS)
    assert found["tag"].label == "#topic/retries"
    labels = {c.label for c in p.suggest(vault_scope(vault), 2)}
    assert "Shared Thing" in labels and "Shared Thing" not in {c.label for c in found.values()}
    assert [c.kind for c in p.suggest(vault_scope(vault), 5)] == []


def test_promote_drafts_a_global_note_and_never_touches_the_client_notes(vault: Path) -> None:
    before = snapshot(vault)
    result = p.promote(vault_scope(vault), "Retry Policy")
    assert result["relpath"] == "global/Retry Policy.md"
    after = snapshot(vault)
    assert {k: v for k, v in after.items() if k != "global/Retry Policy.md"} == before
    text = (vault / "global/Retry Policy.md").read_text()
    assert check_note(extract_note("global/Retry Policy.md", text.encode())) == []
    assert "scope/global" in text and "status/draft" in text and "topic/payments" in text
    for name in CLIENTS:
        assert f"[[clients/{name}|{name.title()}]]" in text
    graph = run(vault_scope(vault))
    assert graph.unresolved == 1  # only [[Shared Thing]] is left dangling: the links now resolve
    with pytest.raises(KgError, match="already a global note"):
        p.promote(vault_scope(vault), "Retry Policy")  # now a global note itself: nothing to promote


def test_promote_refuses_paths_outside_the_vault_and_secrets(vault: Path, tmp_path: Path) -> None:
    with pytest.raises(KgError, match="escapes the vault"):
        p.promote(vault_scope(vault), "Retry Policy", relpath="../outside.md")
    assert not (tmp_path / "outside.md").exists()
    for name in CLIENTS:
        path = vault / f"clients/{name}.md"
        path.write_text(path.read_text() + "\nThe shared token is ghp_abcdefghijklmnopqrstuvwxyz0123456789AB for the API.\n")
    run(vault_scope(vault))
    with pytest.raises(KgError, match="secret"):
        p.promote(vault_scope(vault), "shared token")
    assert not (vault / "global").exists()


def test_cli_suggest_json_and_promote(vault: Path) -> None:
    ran = kg_process("promote", "--suggest", "--json", "--vault", str(vault))
    assert ran.returncode == 0, ran.stderr
    rows = json.loads(ran.stdout)
    assert rows[0]["notes"] >= 3 and all(len(r["scopes"]) >= 3 for r in rows)
    ran = kg_process("promote", "#topic/retries", "--vault", str(vault))
    assert ran.returncode == 0, ran.stderr
    assert "drafted global/topic retries.md" in ran.stdout
    again = kg_process("promote", "#topic/retries", "--vault", str(vault))
    assert again.returncode == 1 and "already exists" in again.stderr
    ran = kg_process("promote", "nothing like this", "--vault", str(vault))
    assert ran.returncode == 1 and ran.stderr.startswith("kg: error:") and "--suggest" in ran.stderr


def test_suggest_reads_no_fifo_and_nothing_outside_the_vault(vault: Path, tmp_path: Path) -> None:
    """issue 19: a note swapped after the build for a FIFO or a symlink out of the vault neither hangs nor leaks."""
    import os

    outside = tmp_path / "outside.md"
    outside.write_text("".join(f"- OUTSIDE-THE-VAULT line {i} {FACT}\n" for i in range(40)), encoding="utf-8")
    (vault / "clients/initech.md").unlink()
    (vault / "clients/initech.md").symlink_to(outside)
    (vault / "clients/globex.md").unlink()
    os.mkfifo(vault / "clients/globex.md")
    ran = kg_process("promote", "--suggest", "--json", "--min", "2", "--vault", str(vault), timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert "OUTSIDE-THE-VAULT" not in ran.stdout + ran.stderr
    rows = json.loads(ran.stdout)
    evidence = [e for r in rows for e in r["evidence"]]
    assert {e["note"] for e in evidence} >= {"clients/acme.md", "clients/initech.md"}  # still cited from the graph
    assert all(e["text"] == "" for e in evidence if e["note"] in ("clients/initech.md", "clients/globex.md"))
    assert any(e["text"] for e in evidence if e["note"] == "clients/acme.md")
