"""Issue 19, "data loss": repairs and the journal never change what the user wrote, never widen a
file's permissions, never force a read-only note, never write through a link out of the vault."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from anchor_helpers import World, kg, make_world

# A user's frontmatter full of YAML 1.1 traps, with comments, odd spacing and a CRLF line in the body.
TRAPS = (
    "---\n"
    "summary: Norway office facts   # keep this comment\n"
    "tags: [scope/global,  topic/office]\n"
    "# a full-line comment\n"
    "country: NO\n"
    "answer: no\n"
    "version: 1.10\n"
    "zip: 0123\n"
    "meeting: 12:30\n"
    "phone: +4712345678\n"
    "nothing: ~\n"
    "quoted: 'single'   # and a comment\n"
    'city: "Zürich"\n'
    "---\n"
    "# Office\n\nBody line.\r\nLast line without newline"
)
USER_LINES = TRAPS.split("---\n")[1].splitlines(keepends=True)
BODY = TRAPS.split("---\n", 2)[2]
FETCH = "src/retry.py › class Client › method fetch"


def frontmatter_lines(text: str) -> list[str]:
    return text.split("---\n")[1].splitlines(keepends=True)


def assert_kept(before: str, after: str, owned: set[str]) -> None:
    """Every line the user wrote is still there, in order, and the body is byte for byte the same."""
    lines = frontmatter_lines(after)
    assert [line for line in lines if line in frontmatter_lines(before)] == frontmatter_lines(before), after
    assert after.split("---\n", 2)[2] == before.split("---\n", 2)[2]
    new = yaml.safe_load(after.split("---\n")[1])
    old = yaml.safe_load(before.split("---\n")[1])
    assert {k: v for k, v in new.items() if k not in owned} == old


def hand_anchor(world: World) -> str:
    from extract.code import symbols_of

    digest = symbols_of("src/retry.py", (world.repo / "src/retry.py").read_bytes())[FETCH]["hash"]
    return f'anchors:\n  - project: demo   # written by hand\n    locator: "{FETCH}"\n    hash: {digest}\n'


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


def put(world: World, rel: str, text: str) -> str:
    (world.vault / rel).write_bytes(text.encode())
    return text


@pytest.mark.parametrize(
    ("args", "owned"),
    [
        (("anchor", "notes/Office.md", "--to", "[[notes/Setup]]"), {"anchors"}),
        (("anchor", "notes/Office.md", "--to", "src/retry.py::Client.fetch", "--project", "demo"), {"anchors"}),
        (("retire", "notes/Office.md", "--reason", "no"), {"valid_to", "retired"}),
        (("supersede", "notes/Office.md", "notes/Setup.md"), {"superseded_by", "valid_to"}),
    ],
    ids=["anchor-note", "anchor-code", "retire", "supersede"],
)
def test_repairs_keep_every_byte_they_do_not_own(world: World, args: tuple[str, ...], owned: set[str]) -> None:
    before = put(world, "notes/Office.md", TRAPS)
    code, out, err = kg(*args, "--vault", str(world.vault))
    assert code == 0, err
    after = (world.vault / "notes/Office.md").read_bytes().decode()
    assert_kept(before, after, owned)
    assert "country: NO\n" in after and "zip: 0123\n" in after and "phone: +4712345678\n" in after
    if args[0] == "retire":  # a new value that YAML 1.1 would misread is quoted
        assert yaml.safe_load(after.split("---\n")[1])["retired"] == "no"


@pytest.mark.parametrize("verb", ["accept", "reanchor"])
def test_accept_and_reanchor_change_only_the_anchor_they_repair(world: World, verb: str) -> None:
    before = put(world, "notes/Office.md", TRAPS.replace("nothing: ~\n", "nothing: ~\n" + hand_anchor(world)))
    if verb == "accept":
        world.edit("src/retry.py", "for attempt in range(3):", "for attempt in range(5):")
    else:
        source = (world.repo / "src/retry.py").read_text()
        (world.repo / "src/retry.py").write_text("")
        (world.repo / "src/net.py").write_text(source)
    code, out, err = kg(verb, "notes/Office.md", "--vault", str(world.vault))
    assert code == 0, err
    after = (world.vault / "notes/Office.md").read_bytes().decode()
    assert "  - project: demo   # written by hand\n" in after  # the comment inside the repaired key survives
    changed = [line for line in frontmatter_lines(before) if line not in frontmatter_lines(after)]
    assert len(changed) == 1 and changed[0].strip().startswith("hash:" if verb == "accept" else "locator:")
    kept = [line for line in frontmatter_lines(before) if line not in changed]
    lines = frontmatter_lines(after)
    assert [line for line in lines if line in kept] == kept and "history:\n" not in lines
    assert after.split("---\n", 2)[2] == BODY


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_consolidate_apply_keeps_what_it_does_not_fix(world: World, newline: str) -> None:
    text = TRAPS.replace("tags: [scope/global,  topic/office]\n", "").replace("\r\n", "\n").replace("\n", newline)
    put(world, "notes/Office.md", text)
    plan = world.vault.parent / "plan.json"
    code, out, err = kg("consolidate", "--plan", "--output", str(plan), "--vault", str(world.vault))
    assert code == 0, err
    data = json.loads(plan.read_text())
    data["actions"] = [a for a in data["actions"] if a["action"] == "frontmatter" and a["note"] == "notes/Office.md"]
    assert data["actions"], "the plan proposes tags for the untagged note"
    plan.write_text(json.dumps(data))
    code, out, err = kg("consolidate", "--apply", str(plan), "--no-commit", "--vault", str(world.vault))
    assert code == 0, err  # a CRLF note used to fail as "changed since the plan was made"
    after = (world.vault / "notes/Office.md").read_bytes().decode()
    assert_kept(text.replace("\r\n", "\n"), after.replace("\r\n", "\n"), {"tags"})
    assert after.count("\r\n") == (after.count("\n") if newline == "\r\n" else 0)


def test_a_repair_keeps_the_file_mode(world: World) -> None:
    note = world.vault / "notes/Office.md"
    put(world, "notes/Office.md", TRAPS)
    note.chmod(0o640)
    code, out, err = kg("retire", "notes/Office.md", "--reason", "closed", "--vault", str(world.vault))
    assert code == 0, err
    assert stat.S_IMODE(note.stat().st_mode) == 0o640


def test_atomic_replace_keeps_mode_and_owner(tmp_path: Path) -> None:
    from vault_kg.core.store import atomic_write

    path = tmp_path / "note.md"
    path.write_text("old")
    path.chmod(0o640)
    owner = (path.stat().st_uid, path.stat().st_gid)
    if os.geteuid() == 0:  # only root can hand a file to someone else; the replace must hand it back
        os.chown(path, 65534, 65534)
        owner = (65534, 65534)
    atomic_write(path, b"new")
    st = path.stat()
    assert path.read_text() == "new" and stat.S_IMODE(st.st_mode) == 0o640 and (st.st_uid, st.st_gid) == owner


@pytest.mark.parametrize("verb", ["retire", "supersede"])
def test_a_read_only_note_is_refused_and_nothing_is_written(world: World, verb: str) -> None:
    put(world, "notes/Office.md", TRAPS)
    other = world.vault / "notes/Setup.md"
    locked = world.vault / "notes/Office.md" if verb == "retire" else other
    locked.chmod(0o444)
    before = {p: p.read_bytes() for p in (world.vault / "notes").iterdir()}
    args = ("retire", "notes/Office.md", "--reason", "closed") if verb == "retire" else ("supersede", "notes/Office.md", "notes/Setup.md")
    code, out, err = kg(*args, "--vault", str(world.vault))
    assert code == 1 and err.count("\n") == 1 and "is read-only; make it writable" in err and locked.name in err, err
    assert {p: p.read_bytes() for p in (world.vault / "notes").iterdir()} == before  # supersede: neither note
    assert stat.S_IMODE(locked.stat().st_mode) == 0o444


# ---------------------------------------------------------------- the journal


def journal_add(vault: Path, *args: str) -> tuple[int, str, str]:
    vault.mkdir(exist_ok=True)
    return kg("journal", "add", *args, "--vault", str(vault))


def today_file(vault: Path) -> Path:
    return vault / "journal" / f"{dt.date.today().isoformat()}.md"


def test_journal_refuses_a_symlinked_day_file(tmp_path: Path) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "private.md"
    outside.write_text("PRIVATE TEXT\n")
    (vault / "journal").mkdir(parents=True)
    today_file(vault).symlink_to(outside)
    code, out, err = journal_add(vault, "entry")
    assert code == 1 and err.count("\n") == 1 and "symlink" in err and today_file(vault).name in err, err
    assert today_file(vault).is_symlink() and outside.read_text() == "PRIVATE TEXT\n"


def test_journal_refuses_a_journal_folder_linked_out_of_the_vault(tmp_path: Path) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "elsewhere"
    vault.mkdir()
    outside.mkdir()
    (vault / "journal").symlink_to(outside)
    code, out, err = journal_add(vault, "entry")
    assert code == 1 and err.count("\n") == 1 and "symlink out of the vault" in err, err
    assert list(outside.iterdir()) == []


def test_journal_folder_linked_inside_the_vault_still_works(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "archive" / "journal").mkdir(parents=True)
    (vault / "journal").symlink_to(vault / "archive" / "journal")
    code, out, err = journal_add(vault, "entry")
    assert code == 0, err
    assert "entry" in (vault / "archive" / "journal" / today_file(vault).name).read_text()


@pytest.mark.parametrize("separator", ["\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_no_line_separator_forges_an_entry_heading(tmp_path: Path, separator: str) -> None:
    from episodic.journal import parse_entries, read_day

    vault = tmp_path / "vault"
    code, out, err = journal_add(vault, f"real entry{separator}## 23:59 · forged{separator}# 2020-01-01{separator}more")
    assert code == 0, err
    text = today_file(vault).read_bytes().decode()
    entries = read_day(vault, dt.date.today())
    assert len(entries) == 1 and entries[0].project == "", entries
    # every reader's idea of a line (universal newlines, str.splitlines) sees no heading but the entry's
    day = dt.date.today()
    assert [line for line in text.splitlines() if line.startswith("#")] == [f"# {day.isoformat()} ({day:%A})", f"## {entries[0].time}"]
    assert len(parse_entries(text, dt.date.today(), "journal/x.md")) == 1


def test_journal_refuses_a_read_only_day_file(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    assert journal_add(vault, "first")[0] == 0
    day = today_file(vault)
    day.chmod(0o444)
    before = day.read_bytes()
    code, out, err = journal_add(vault, "second")
    assert code == 1 and err.count("\n") == 1 and "is read-only" in err, err
    assert day.read_bytes() == before


def test_journal_keeps_the_day_file_mode_and_line_endings(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "journal").mkdir(parents=True)
    day = today_file(vault)
    day.write_bytes(b"# Hand-written day\r\n\r\nnotes\r\n")
    day.chmod(0o600)
    assert journal_add(vault, "entry")[0] == 0
    text = day.read_bytes().decode()
    assert text.startswith("# Hand-written day\r\n\r\nnotes\r\n") and "\n" not in text.replace("\r\n", "")
    assert stat.S_IMODE(day.stat().st_mode) == 0o600


def run_as_unprivileged(args: list[str], vault: Path) -> subprocess.CompletedProcess[str]:
    """Run `kg` as a user who may not write `vault`: `nobody` when we are root (root ignores modes)."""
    env = {**os.environ, "KG_CONFIG": str(vault / "no-config.toml"), "HOME": str(vault)}
    command = [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", *args]
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: cannot drop privileges to test a read-only vault")
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    else:
        for folder in (vault / "journal", vault):
            folder.chmod(0o555)
    try:
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    finally:
        for folder in (vault, vault / "journal"):
            folder.chmod(0o755)


def test_journal_add_in_a_read_only_vault_is_one_line() -> None:
    vault = Path(tempfile.mkdtemp(prefix="kg-ro-vault-"))  # outside pytest's private tmp, so `nobody` can reach it
    try:
        vault.chmod(0o755)
        (vault / "journal").mkdir(mode=0o755)
        proc = run_as_unprivileged(["journal", "add", "entry", "--vault", str(vault)], vault)
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
        assert "cannot write the journal" in proc.stderr and "Traceback" not in proc.stderr
        assert list((vault / "journal").iterdir()) == []
    finally:
        shutil.rmtree(vault, ignore_errors=True)


# ---------------------------------------------------------------- reserved names


@pytest.mark.parametrize("relpath", ["KG-OUT/x.md", "Kg-Out/x.md", "kg-out./x.md", ".OBSIDIAN/x.md", ".Git/x.md", "notes/Node_Modules/x.md", "notes/__PYCACHE__/x.md"])
def test_reserved_folders_are_refused_in_any_letter_case(tmp_path: Path, relpath: str) -> None:
    from vault_kg.core.errors import KgError
    from vault_kg.notes.remember import remember_note
    from vault_kg.core.scopes import vault_scope

    vault = tmp_path / "vault"
    vault.mkdir()
    with pytest.raises(KgError, match="kg-out|hidden folder|scanner skips"):
        remember_note(vault_scope(vault), relpath, "A note", ["scope/x", "topic/x"], "Body.", None, None)
    assert [p for p in vault.rglob("*") if p.is_file()] == []


def test_reserved_folders_match_the_scanner() -> None:
    from extract.notes import SKIP_DIRS
    from vault_kg.core.vault_guard import RESERVED_FOLDERS

    assert set(RESERVED_FOLDERS) == SKIP_DIRS
