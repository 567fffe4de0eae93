"""The CLI twins of the memory tools: `kg remember`, `kg note show|list|append|edit`, `kg recent`,
`kg neighbors`, `kg brief`, run as a user runs them (a fresh `kg` process each)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import EXAMPLE_VAULT, kg_process

NOTE = "services/Payments API.md"


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    done = kg("build", vault=vault)
    assert done.returncode == 0, done.stderr
    return vault


def kg(*args: str, vault: Path, input: str | None = None):
    env = {"KG_CONFIG": str(vault.parent / "config.toml"), "KG_OLLAMA": "off", "KG_VAULT": ""}
    return kg_process(*args, "--vault", str(vault), env=env, cwd=vault.parent, input=input)


def files(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*.md")) if "kg-out" not in p.parts}


def test_note_show_list_append_edit_and_recent(vault: Path) -> None:
    shown = kg("note", "show", "Payments API", vault=vault)
    assert shown.returncode == 0 and (vault / NOTE).read_text(encoding="utf-8").rstrip() in shown.stdout
    data = json.loads(kg("note", "show", "Payments API", "--json", vault=vault).stdout)
    assert data["frontmatter"]["tags"][0] == "service/payments-api"
    listed = json.loads(kg("note", "list", "--folder", "clients", "--json", vault=vault).stdout)
    assert {n["path"] for n in listed["notes"]} == {"clients/Acme Corp.md", "clients/Globex.md", "clients/Initech.md"}
    appended = kg("note", "append", NOTE, "-", vault=vault, input="See also [[Webhook Relay]].\n")
    assert appended.returncode == 0 and appended.stdout == f"appended {NOTE} and updated the graph\n"
    assert (vault / NOTE).read_text(encoding="utf-8").endswith("\n\nSee also [[Webhook Relay]].\n")
    edited = kg("note", "edit", NOTE, "--old", "FastAPI + Postgres", "--new", "FastAPI + PostgreSQL 16", vault=vault)
    assert edited.returncode == 0 and "(1 replacement)" in edited.stdout
    assert kg("journal", "add", "Upgraded Postgres", vault=vault).returncode == 0
    activity = json.loads(kg("recent", "--days", "1", "--json", vault=vault).stdout)
    assert NOTE in {n["path"] for n in activity["notes"]} and activity["journal"][0]["text"] == "Upgraded Postgres"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["note", "edit", NOTE, "--old", "Stripe", "--new", "Adyen"], "occurs [0-9]+ times"),
        (["note", "edit", NOTE, "--old", "not there at all", "--new", "x"], "not in the note"),
        (["note", "append", NOTE, "token AKIAIOSFODNN7EXAMPLE"], "secret"),
        (["note", "append", "../outside.md", "x"], "escapes the vault|no note"),
        (["note", "show", "No such note"], "no note"),
        (["remember", "../outside.md", "--summary", "x", "--tag", "scope/x"], "escapes the vault"),
        (["remember", "notes/Key.md", "--summary", "x", "--tag", "scope/x", "--body", "AKIAIOSFODNN7EXAMPLE"], "secret"),
        (["remember", NOTE, "--summary", "x", "--tag", "scope/x"], "already exists"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(vault: Path, args: list[str], message: str) -> None:
    (vault.parent / "outside.md").write_text("outside\n")
    before = files(vault)
    done = kg(*args, vault=vault)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kg: error: ")
    import re

    assert re.search(message, lines[0]), lines[0]
    assert files(vault) == before and (vault.parent / "outside.md").read_text() == "outside\n"


def test_remember_neighbors_and_brief(vault: Path) -> None:
    made = kg("remember", "notes/Retry budget.md", "--summary", "Retries back off", "--tag", "topic/payments", "--tag", "scope/acme", "--body", "See [[Payments API]].", vault=vault)
    assert made.returncode == 0 and made.stdout == "wrote notes/Retry budget.md and added it to the graph\n"
    near = json.loads(kg("neighbors", "Payments API", "--direction", "in", "--relation", "links_to", "-n", "200", "--json", vault=vault).stdout)
    assert "note:notes/Retry budget.md" in {n["id"] for n in near["neighbors"]}
    bad = kg("neighbors", "Payments API", "--direction", "sideways", vault=vault)
    assert bad.returncode == 1 and "--direction" in bad.stderr
    brief = kg("brief", vault=vault)
    assert brief.returncode == 0 and brief.stdout.startswith("<vault-kg-brief>") and "Central notes in the vault" in brief.stdout


def test_append_keeps_a_crlf_note_crlf_and_every_existing_byte(vault: Path) -> None:
    crlf = vault / "notes" / "Windows Note.md"
    crlf.parent.mkdir(exist_ok=True)
    before = b"---\r\nsummary: Written on Windows.\r\ntags: [tool/x, scope/global]\r\n---\r\n# Windows Note\r\n\r\nBody.\r\n"
    crlf.write_bytes(before)
    assert kg("note", "append", "notes/Windows Note.md", "-", vault=vault, input="One more line.\nAnd another.\n").returncode == 0
    assert crlf.read_bytes() == before + b"\r\nOne more line.\r\nAnd another.\r\n"
