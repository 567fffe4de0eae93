"""Issue 29, "data loss": writers racing each other. Each test names its finding (its number in
the issue) and fails on the code before the fix.

Races between kg's own writers run as threads started together (the MCP server runs its tools on
threads; the soak in test_write_soak.py races real processes). The race with another program is
made deterministic: the "editor" saves its line at the one moment that used to lose it, between
kg's read of the note and kg's write.
"""

from __future__ import annotations

import os
import threading
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import pytest

from vault_kg.core.errors import KgError
from vault_kg.core.scopes import Scope

NOTE = "notes/Retries.md"
HEAD = "---\nsummary: How we retry\ntags: [topic/retries, scope/payments]\n---\n# Retries\n\nBackoff is exponential.\n"


def make_vault(tmp_path: Path, text: str = HEAD) -> Scope:
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / NOTE).write_text(text, encoding="utf-8")
    return Scope("vault", "vault", root, root / "kg-out")


def together(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Run `work(i)` on `count` threads released at once; each result, or the exception it raised."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except Exception as exc:  # noqa: BLE001 - the test looks at each outcome
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def editor_saves_once(path: Path, line: str) -> Callable[[], None]:
    """An outside editor that saves `line` at the end of the file, in place, the first time it is called."""
    saved: list[bool] = []

    def save() -> None:
        if not saved:
            saved.append(True)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")

    return save


def between_read_and_write(monkeypatch: pytest.MonkeyPatch, target: str, hook: Callable[[], None]) -> None:
    """Call `hook` whenever `target` (a check every kg write makes after reading the note) runs."""
    module, _, name = target.rpartition(".")
    real = getattr(__import__(module, fromlist=[name]), name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        hook()
        return real(*args, **kwargs)

    monkeypatch.setattr(target, wrapped)


# -- 1: concurrent appends and edits of one note all land ----------------------------------------------


def test_eight_concurrent_appends_all_land(tmp_path: Path) -> None:
    from vault_kg.notes.notebook import append_note

    vault = make_vault(tmp_path)
    results = together(8, lambda i: append_note(vault, NOTE, f"appended line {i}"))
    assert [r["action"] for r in results] == ["appended"] * 8, results
    text = (vault.root / NOTE).read_text(encoding="utf-8")
    assert text.startswith(HEAD) and sorted(line for line in text.splitlines() if line.startswith("appended")) == [f"appended line {i}" for i in range(8)]


def test_eight_concurrent_edits_all_land(tmp_path: Path) -> None:
    from vault_kg.notes.notebook import edit_note

    vault = make_vault(tmp_path, HEAD + "".join(f"- slot {i} open\n" for i in range(8)))
    results = together(8, lambda i: edit_note(vault, NOTE, f"slot {i} open", f"slot {i} done"))
    assert [r["action"] for r in results] == ["edited"] * 8, results
    text = (vault.root / NOTE).read_text(encoding="utf-8")
    assert "open" not in text and all(f"- slot {i} done\n" in text for i in range(8))


# -- 2: concurrent `remember` of one new path: one note written, the others refused ------------------


def test_concurrent_remember_of_one_path_writes_once_and_refuses_the_rest(tmp_path: Path) -> None:
    from vault_kg.notes.remember import remember_note

    vault = make_vault(tmp_path)
    results = together(6, lambda i: remember_note(vault, "notes/New.md", f"writer {i}", ["topic/x", "scope/payments"], f"body of writer {i}"))
    wrote = [i for i, r in enumerate(results) if isinstance(r, dict)]
    refused = [r for r in results if isinstance(r, KgError)]
    assert len(wrote) == 1 and len(refused) == 5, results
    assert all("already exists" in str(r) for r in refused)
    assert f"body of writer {wrote[0]}" in (vault.root / "notes/New.md").read_text(encoding="utf-8")


# -- 3: an outside editor's save between kg's read and kg's write is kept --------------------------------


def test_an_editors_save_during_an_append_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_kg.notes.notebook import append_note

    vault = make_vault(tmp_path)
    between_read_and_write(monkeypatch, "vault_kg.notes.vault_write.check_text", editor_saves_once(vault.root / NOTE, "saved by the editor"))
    assert append_note(vault, NOTE, "appended by kg")["action"] == "appended"
    text = (vault.root / NOTE).read_text(encoding="utf-8")
    assert "saved by the editor\n" in text and text.rstrip().endswith("appended by kg")


def test_an_editors_save_during_an_edit_is_kept_and_the_edit_reapplied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_kg.notes.notebook import edit_note

    vault = make_vault(tmp_path)
    between_read_and_write(monkeypatch, "vault_kg.notes.vault_write.check_text", editor_saves_once(vault.root / NOTE, "saved by the editor"))
    assert edit_note(vault, NOTE, "exponential", "exponential, capped at 5 tries")["replaced"] == 1
    text = (vault.root / NOTE).read_text(encoding="utf-8")
    assert "saved by the editor\n" in text and "capped at 5 tries" in text


def test_an_edit_whose_text_the_editor_removed_is_refused_not_applied_over_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_kg.notes.notebook import edit_note

    vault = make_vault(tmp_path)
    path = vault.root / NOTE

    def editor_rewrites() -> None:
        if "exponential" in path.read_text(encoding="utf-8"):
            path.write_text(HEAD.replace("exponential", "linear"), encoding="utf-8")

    between_read_and_write(monkeypatch, "vault_kg.notes.vault_write.check_text", editor_rewrites)
    with pytest.raises(KgError, match="not in the note") as refused:
        edit_note(vault, NOTE, "exponential", "exponential, capped")
    assert len(str(refused.value).splitlines()) == 1
    assert path.read_text(encoding="utf-8") == HEAD.replace("exponential", "linear")


def test_an_editors_save_during_a_journal_append_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from episodic.journal import append_entry, day_file

    vault = make_vault(tmp_path)
    now = datetime(2026, 3, 2, 10, 0)
    append_entry(vault.root, "first entry", now=now)
    day = day_file(vault.root, now.date())
    between_read_and_write(monkeypatch, "vault_kg.core.vault_guard.refuse_secrets", editor_saves_once(day, "a line the user typed"))
    append_entry(vault.root, "second entry", now=now.replace(minute=5))
    text = day.read_text(encoding="utf-8")
    assert "a line the user typed\n" in text and "first entry" in text and "second entry" in text


# -- 5: the journal merge keeps fenced lines inside their entry, and two identical entries -------------


def test_journal_merge_does_not_split_an_entry_at_a_heading_inside_a_fence() -> None:
    from vault_kg.notes.journal_merge import merge_day

    base = "# 2026-03-02\n\n## 09:00 · a\nbase\n"
    fenced = "## 10:00 · a\nran this:\n```sh\n# a shell comment, not a heading\n## nor this\necho hi\n```\nafter the fence\n"
    ours = base + "\n" + fenced
    theirs = base + "\n## 09:30 · b\nfrom the other machine\n"
    merged = merge_day(base, ours, theirs, name="journal/2026-03-02.md")
    assert fenced.rstrip() in merged, merged
    assert merged.index("## 09:30 · b") < merged.index("## 10:00 · a")


def test_journal_merge_keeps_a_second_identical_entry_the_other_side_added() -> None:
    from vault_kg.notes.journal_merge import merge_day

    base = "## 09:00 · a\nbase\n\n## 10:00 · a\nran the tests\n"
    theirs = base + "\n## 10:00 · a\nran the tests\n"  # the same minute, the same words: a second run
    ours = base + "\n## 11:00 · a\nours\n"
    merged = merge_day(base, ours, theirs, name="journal/2026-03-02.md")
    assert merged.count("## 10:00 · a\nran the tests") == 2 and "ours" in merged, merged
    assert merge_day(base, theirs, theirs).count("ran the tests") == 2  # both sides added it the same way: once more, not twice


# -- 6: consolidate's merge keeps the text written right under the dropped note's H1 --------------------


def test_consolidate_merge_keeps_text_directly_under_the_h1(tmp_path: Path) -> None:
    from vault_kg.notes import consolidate as c

    body = "Redis has two jobs in our stack and both are disposable: losing its data loses nothing that matters. It is the broker for the reporting jobs and it keeps the rate-limit counters of the public API."
    root = tmp_path / "vault"
    (root / "tools").mkdir(parents=True)
    front = "---\nsummary: {0}\ntags: [tool/{1}, scope/global]\n---\n"
    (root / "tools/Redis.md").write_text(front.format("Redis", "redis") + f"# Redis\n\n{body}\n", encoding="utf-8")
    (root / "tools/Postgres.md").write_text(front.format("Postgres", "postgres") + "# Postgres\n\nJobs queue in [[Redis]].\n", encoding="utf-8")
    (root / "tools/Cache Server.md").write_text(front.format("The cache", "cache") + f"# Cache Server\nWritten right under the title: staging uses it too.\n\n{body}\n", encoding="utf-8")
    data = c.plan(root)
    data["actions"] = [a for a in data["actions"] if a["action"] == "merge"]
    assert [a["merge"] for a in data["actions"]] == ["tools/Cache Server.md"], data
    plan = tmp_path / "plan.md"
    plan.write_text(c.render_markdown(data), encoding="utf-8")
    c.apply(root, plan, commit=False)
    assert "Written right under the title: staging uses it too." in (root / data["actions"][0]["keep"]).read_text(encoding="utf-8")


# -- 7: a rewrite keeps extended attributes and mode; an append keeps the very file --------------------


def test_a_rewrite_keeps_xattrs_and_mode_and_an_append_keeps_the_inode(tmp_path: Path) -> None:
    from vault_kg.notes.notebook import append_note, edit_note

    vault = make_vault(tmp_path)
    path = vault.root / NOTE
    os.chmod(path, 0o640)
    os.setxattr(path, "user.xdg.tags", b"work,retries")
    os.setxattr(path, "user.sync.id", b"\x00\x01binary")
    edit_note(vault, NOTE, "exponential", "exponential, capped")
    assert os.getxattr(path, "user.xdg.tags") == b"work,retries" and os.getxattr(path, "user.sync.id") == b"\x00\x01binary"
    assert os.stat(path).st_mode & 0o777 == 0o640
    inode = os.stat(path).st_ino
    append_note(vault, NOTE, "one more line")
    assert os.stat(path).st_ino == inode and os.getxattr(path, "user.xdg.tags") == b"work,retries"
