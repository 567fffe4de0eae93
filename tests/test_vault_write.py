"""The one vault write function: inside the vault, in the contract, never a secret."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vault_kg.core.errors import KgError
from vault_kg.notes.vault_write import render_note, write_note

GOOD = render_note("A decision about retries", ["scope/payments", "topic/retries"], "# Retries\n\nWe retry three times.")


def test_writes_a_contract_note_atomically(tmp_path: Path) -> None:
    path = write_note(tmp_path, "decisions/Retries.md", GOOD, create=True)
    assert path == tmp_path / "decisions" / "Retries.md" and path.read_text() == GOOD
    with pytest.raises(KgError, match="already exists"):
        write_note(tmp_path, "decisions/Retries.md", GOOD, create=True)


@pytest.mark.parametrize("relpath", ["../out.md", "/etc/passwd.md", "a/../../out.md", "kg-out/x.md", ".obsidian/x.md", "notes/x.txt", "~/x.md", ""])
def test_refuses_paths_outside_the_vault(tmp_path: Path, relpath: str) -> None:
    with pytest.raises(KgError):
        write_note(tmp_path, relpath, GOOD)
    assert not (tmp_path.parent / "out.md").exists()


def test_refuses_symlinked_folder_out_of_the_vault(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    outside = tmp_path / "outside"
    vault.mkdir()
    outside.mkdir()
    os.symlink(outside, vault / "linked")
    with pytest.raises(KgError, match="symlink"):
        write_note(vault, "linked/x.md", GOOD)
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    "secret",
    [
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_" + "a1B2" * 9,
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        "postgres://admin:hunter2secret@db.internal:5432/app",
    ],
)
def test_refuses_secrets(tmp_path: Path, secret: str) -> None:
    with pytest.raises(KgError, match="secret"):
        write_note(tmp_path, "n.md", GOOD + "\n" + secret + "\n")
    assert not (tmp_path / "n.md").exists()


def test_refuses_contract_violations_unless_told(tmp_path: Path) -> None:
    bad = "---\nsummary: no scope tag\ntags: [topic/x]\n---\nbody\n"
    with pytest.raises(KgError, match="scope/"):
        write_note(tmp_path, "n.md", bad)
    write_note(tmp_path, "n.md", bad, contract=False)
    assert (tmp_path / "n.md").exists()


def test_refuses_a_new_scope_global_tag_unless_promoting(tmp_path: Path) -> None:
    """The PreToolUse promotion rule, held in the write path too (MCP `remember` never passes the hook)."""
    global_note = render_note("Retries everywhere", ["scope/global", "topic/retries"], "# Retries\n")
    with pytest.raises(KgError, match="kg promote") as refused:
        write_note(tmp_path, "new/Retries.md", global_note, create=True)
    assert len(str(refused.value).splitlines()) == 1 and not (tmp_path / "new").exists()
    path = write_note(tmp_path, "decisions/Retries.md", GOOD, create=True)
    with pytest.raises(KgError, match="kg promote"):  # an edit that newly adds the tag, inline this time
        write_note(tmp_path, "decisions/Retries.md", GOOD + "\n#scope/global\n", based_on=GOOD)
    assert path.read_text() == GOOD
    write_note(tmp_path, "global/Retries.md", global_note, create=True, promotion=True)  # `kg promote`
    edited = global_note + "\nStill true.\n"
    write_note(tmp_path, "global/Retries.md", edited, based_on=global_note)  # already global: editing it is fine
    assert (tmp_path / "global" / "Retries.md").read_text() == edited
