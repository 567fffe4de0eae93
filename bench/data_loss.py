"""What the vault writers do to a user's files: the issue-19 "data loss" findings, measured.

Runs each repair and the journal writer on hostile but legal inputs in a temporary vault and prints
what ended up on disk. Run it against any checkout to compare (the import path decides which code
runs), e.g. `PYTHONPATH=/tmp/old-checkout python bench/data_loss.py`.

    python bench/data_loss.py
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import sys
import tempfile
from pathlib import Path

TRAPS = """\
---
summary: Norway office facts   # keep this comment
tags: [scope/global,  topic/office]
country: NO
answer: no
version: 1.10
zip: 0123
meeting: 12:30
phone: +4712345678
nothing: ~
---
# Office

Body line.\r
"""
CODE = "def fetch(url):\n    return url\n"


def kg(*args: str) -> tuple[int, str, str]:
    from vault_kg.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def world(tmp: Path) -> tuple[Path, Path]:
    vault, repo = tmp / "vault", tmp / "repo"
    (vault / "notes").mkdir(parents=True)
    (repo / ".git").mkdir(parents=True)
    (repo / "app.py").write_text(CODE)
    for name in ("Office", "Other", "Newer"):
        (vault / "notes" / f"{name}.md").write_bytes(TRAPS.replace("# Office", f"# {name}").encode())
    os.environ["KG_CONFIG"] = str(tmp / "config.toml")
    os.environ["KG_OLLAMA"] = "off"
    assert kg("project", "add", str(repo), "--name", "demo")[0] == 0
    return vault, repo


def frontmatter_lines(text: str) -> list[str]:
    match = re.match(r"---\r?\n(.*?)^---", text, re.DOTALL | re.MULTILINE)
    return match.group(1).splitlines(keepends=True) if match else []


def untouched_lines(before: str, after: str) -> str:
    """How many of the user's frontmatter lines (and the body) survive byte for byte."""
    head, now = frontmatter_lines(before), frontmatter_lines(after)
    kept = sum(1 for line in head if line in now)
    body = "# " + before.split("\n# ", 1)[1]
    return f"{kept}/{len(head)} frontmatter lines kept byte for byte, body kept: {after.endswith(body)}"


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    return f"{len(lines)} line(s): {lines[-1][:220] if lines else ''}"


def repairs(tmp: Path) -> None:
    """Each repair on a fresh copy of the trap note (after what it needs first, e.g. an anchor)."""
    from extract.code import symbols_of

    vault, repo = world(tmp)
    anchor = ("anchor", "notes/Office.md", "--to", "app.py::fetch", "--project", "demo")
    digest = symbols_of("app.py", CODE.encode())["app.py › function fetch"]["hash"]
    by_hand = f'anchors:\n  - project: demo   # written by hand\n    locator: "app.py › function fetch"\n    hash: {digest}\n'

    def edit_code() -> None:
        (repo / "app.py").write_text(CODE.replace("url", "link"))

    def move_code() -> None:
        (repo / "app.py").write_text("")
        (repo / "net.py").write_text(CODE)

    steps = [
        ("kg anchor --to [[Other]]", "", None, ("anchor", "notes/Office.md", "--to", "[[notes/Other]]")),
        ("kg anchor --to app.py::fetch", "", None, anchor),
        ("kg accept (code edited)", by_hand, edit_code, ("accept", "notes/Office.md")),
        ("kg reanchor (code moved)", by_hand, move_code, ("reanchor", "notes/Office.md")),
        ("kg supersede OLD NEW", "", None, ("supersede", "notes/Office.md", "notes/Newer.md")),
        ("kg retire", "", None, ("retire", "notes/Office.md", "--reason", "office closed")),
    ]
    note = vault / "notes" / "Office.md"
    for label, extra, change, args in steps:
        (repo / "app.py").write_text(CODE)
        (repo / "net.py").unlink(missing_ok=True)
        for name in ("Office", "Newer"):
            (vault / "notes" / f"{name}.md").write_bytes(TRAPS.replace("# Office", f"# {name}").replace("nothing: ~\n", "nothing: ~\n" + extra).encode())
        if change:
            change()
        before = note.read_bytes().decode()
        code, _, err = kg(*args, "--vault", str(vault))
        after = note.read_bytes().decode()
        print(f"{label:32s} exit {code}; {untouched_lines(before, after)}" + (f"; {one_line(err)}" if code else ""))
    print("--- notes/Office.md after `kg retire` on the trap note: its frontmatter, line by line ---")
    for line in frontmatter_lines(note.read_bytes().decode()):
        print("   ", repr(line))


def consolidate(tmp: Path) -> None:
    import json

    vault = tmp / "vault"
    (vault / "notes").mkdir(parents=True)
    loose = TRAPS.replace("tags: [scope/global,  topic/office]\n", "")
    notes = {"notes/Loose.md": loose.replace("\r\n", "\n"), "notes/Crlf.md": loose.replace("\r\n", "\n").replace("\n", "\r\n")}
    for rel, text in notes.items():
        (vault / rel).write_bytes(text.encode())
    os.environ["KG_CONFIG"] = str(tmp / "config.toml")
    plan = tmp / "plan.json"
    kg("consolidate", "--plan", "--output", str(plan), "--vault", str(vault))
    data = json.loads(plan.read_text())
    for rel, text in notes.items():
        data_one = {**data, "actions": [a for a in data["actions"] if a["action"] == "frontmatter" and a["note"] == rel]}
        plan.write_text(json.dumps(data_one))
        code, out, err = kg("consolidate", "--apply", str(plan), "--no-commit", "--vault", str(vault))
        after = (vault / rel).read_bytes().decode()
        label = "kg consolidate --apply (" + ("CRLF" if "\r" in text else "LF") + ")"
        print(f"{label:32s} exit {code}; {untouched_lines(text, after)}" + (f"; {one_line(err)}" if code else ""))


def modes(tmp: Path) -> None:
    vault, _ = world(tmp)
    shared = vault / "notes" / "Office.md"
    shared.chmod(0o640)
    kg("retire", "notes/Office.md", "--reason", "closed", "--vault", str(vault))
    print(f"0640 note after kg retire: {stat.S_IMODE(shared.stat().st_mode):04o}")
    locked = vault / "notes" / "Other.md"
    locked.chmod(0o444)
    before = locked.read_bytes()
    code, _, err = kg("retire", "notes/Other.md", "--reason", "closed", "--vault", str(vault))
    print(f"0444 note, kg retire: exit {code}, file {'unchanged' if locked.read_bytes() == before else 'REWRITTEN'}, mode {stat.S_IMODE(locked.stat().st_mode):04o}; {one_line(err)}")


def journal(tmp: Path) -> None:
    import datetime as dt

    vault = tmp / "vault"
    outside = tmp / "outside"
    outside.mkdir()
    secret = outside / "private.md"
    secret.write_text("PRIVATE TEXT FROM OUTSIDE THE VAULT\n")
    (vault / "journal").mkdir(parents=True)
    os.environ["KG_CONFIG"] = str(tmp / "config.toml")
    day = vault / "journal" / f"{dt.date.today().isoformat()}.md"
    day.symlink_to(secret)
    code, _, err = kg("journal", "add", "entry one", "--vault", str(vault))
    copied = day.exists() and not day.is_symlink() and "PRIVATE TEXT" in day.read_text()
    print(f"symlinked journal/<day>.md: exit {code}; outside text copied into the vault: {copied}; {one_line(err) if code else 'no message'}")

    vault2 = tmp / "vault2"
    vault2.mkdir()
    (outside / "jdir").mkdir()
    (vault2 / "journal").symlink_to(outside / "jdir")
    code, _, err = kg("journal", "add", "entry two", "--vault", str(vault2))
    written = sorted(p.name for p in (outside / "jdir").iterdir())
    print(f"symlinked journal/ folder: exit {code}; files written outside the vault: {written}; {one_line(err) if code else 'no message'}")

    vault3 = tmp / "vault3"
    vault3.mkdir()
    code, _, err = kg("journal", "add", "real entry\r## 23:59 · forged\rinjected line\u2028## 23:58 · forged too", "--vault", str(vault3))
    from episodic.journal import read_day

    entries = read_day(vault3, dt.date.today())
    print(f"journal add with bare \\r and \\u2028 headings: exit {code}; entries read back: {len(entries)} ({[e.project for e in entries]})")

    code, err = read_only_journal_add(tmp)
    print(f"journal add in a read-only vault: exit {code}; {one_line(err)}")


def read_only_journal_add(tmp: Path) -> tuple[int, str]:
    """`kg journal add` by a user who may not write the vault (as root: run as `nobody`, since root ignores modes)."""
    import shutil
    import subprocess

    vault = Path(tempfile.mkdtemp(prefix="kg-ro-vault-"))
    (vault / "journal").mkdir()
    prefix: list[str] = []
    if os.geteuid() == 0 and shutil.which("setpriv"):
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        for folder in (vault, vault / "journal"):
            folder.chmod(0o755)
    else:
        for folder in (vault / "journal", vault):
            folder.chmod(0o555)
    env = {**os.environ, "KG_CONFIG": str(vault / "missing-config.toml"), "HOME": str(vault)}
    try:
        proc = subprocess.run(
            [*prefix, sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "journal", "add", "read-only vault", "--vault", str(vault)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    finally:
        for folder in (vault, vault / "journal"):
            folder.chmod(0o755)
        shutil.rmtree(vault, ignore_errors=True)
    return proc.returncode, proc.stderr


def reserved(tmp: Path) -> None:
    from vault_kg.notes.remember import remember_note
    from vault_kg.core.scopes import vault_scope

    vault = tmp / "vault"
    vault.mkdir()
    os.environ["KG_CONFIG"] = str(tmp / "config.toml")
    for rel in ("KG-OUT/x.md", "Kg-Out/x.md", ".OBSIDIAN/x.md", "notes/NODE_MODULES/x.md"):
        try:
            remember_note(vault_scope(vault), rel, "A note", ["scope/global", "topic/x"], "Body.", None, None)
            print(f"MCP remember {rel}: WRITTEN")
        except Exception as exc:
            print(f"MCP remember {rel}: refused: {exc}")


def cost(tmp: Path) -> None:
    """What one repair's frontmatter edit costs: `kg retire` in-process, after a warm-up, and `kg retire` as a fresh process."""
    import statistics
    import subprocess
    import time

    vault, _ = world(tmp)
    note = vault / "notes" / "Office.md"
    times = []
    for i in range(21):
        note.write_bytes(TRAPS.encode())
        start = time.perf_counter()
        code, _, err = kg("retire", "notes/Office.md", "--reason", f"closed {i}", "--vault", str(vault))
        times.append(time.perf_counter() - start)
        assert code == 0, err
    print(f"kg retire in-process: median {1000 * statistics.median(times[1:]):.1f} ms over 20 runs (first run {1000 * times[0]:.0f} ms)")
    note.write_bytes(TRAPS.encode())
    runs = []
    for _ in range(5):
        note.write_bytes(TRAPS.encode())
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", "from vault_kg.cli.entry import main; main()", "retire", "notes/Office.md", "--reason", "x", "--vault", str(vault)],
            capture_output=True,
            text=True,
            env=dict(os.environ),
        )
        runs.append(time.perf_counter() - start)
        assert proc.returncode == 0, proc.stderr
    print(f"kg retire as a process: median {1000 * statistics.median(runs):.0f} ms over 5 runs")


def main() -> None:
    for part in (repairs, consolidate, modes, journal, reserved, cost):
        print(f"== {part.__name__}")
        with tempfile.TemporaryDirectory() as tmp:
            part(Path(tmp))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("data_loss"):
        main()
