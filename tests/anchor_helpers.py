"""A small repository and vault built in tmp for the anchor tests, and the `kg` CLI run in-process."""

from __future__ import annotations

import os
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

RETRY_PY = '''\
"""Retrying HTTP calls."""


class Client:
    def fetch(self, url):
        # try a few times before giving up
        for attempt in range(3):
            if self.get(url):
                return True
        return False

    def get(self, url):
        return url.startswith("http")


class Other:
    def close(self):
        return None


def backoff(n):
    return 2 ** n
'''

README_MD = """\
# Demo

## Setup

Install it, then run it.
<!-- maintainers: keep this short -->

## Limits

| setting | value |
|---------|-------|
| timeout | 30 |
| retries | 3 |

```
## Not a heading
```
"""


def note(summary: str, body: str = "Body.", extra: str = "") -> str:
    return f"---\nsummary: {summary}\ntags: [scope/global, topic/retry]\n{extra}---\n{body}\n"


@dataclass
class World:
    repo: Path
    vault: Path
    project: str = "demo"

    def edit(self, relpath: str, old: str, new: str) -> None:
        """Replace text in a repo file; its stat changes even for a same-size edit."""
        path = self.repo / relpath
        text = path.read_text()
        assert old in text, f"{old!r} not in {relpath}"
        path.write_text(text.replace(old, new))
        bump(path)

    def write_note(self, relpath: str, text: str) -> Path:
        path = self.vault / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        bump(path)
        return path

    def note_text(self, relpath: str) -> str:
        return (self.vault / relpath).read_text()


_BUMPS = [0]


def bump(path: Path) -> None:
    """Give the file a distinct mtime half a minute in the past: every edit changes the stat
    (no same-tick collision) and no cache has to treat the file as just modified."""
    _BUMPS[0] += 1
    stamp = time.time_ns() - 30 * 10**9 + _BUMPS[0] * 10**6
    os.utime(path, ns=(stamp, stamp))


def settle(world: World) -> None:
    """Age every file of the repo and the vault, as files are between real edits."""
    for root in (world.repo, world.vault):
        for path in sorted(root.rglob("*")):
            if path.is_file() and "kg-out" not in path.parts and ".git" not in path.parts:
                bump(path)


def kg(*args: str) -> tuple[int, str, str]:
    """The real CLI, in this process (exit code, stdout, stderr)."""
    import contextlib
    import io

    from vault_kg.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def make_world(tmp_path: Path) -> World:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "src" / "retry.py").write_text(RETRY_PY)
    (repo / "README.md").write_text(README_MD)
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    world = World(repo, vault)
    world.write_note("notes/Retry.md", note("How fetch retries.", "# Retry\n\nFetch retries three times."))
    world.write_note("notes/Backoff.md", note("Exponential backoff."))
    world.write_note("notes/Setup.md", note("How to set the demo up."))
    code, out, err = kg("project", "add", str(repo), "--name", "demo")
    assert code == 0, err
    return world


def anchor(world: World, note_name: str, target: str) -> None:
    code, out, err = kg("anchor", note_name, "--to", target, "--project", world.project, "--vault", str(world.vault))
    assert code == 0, err


def check(world: World, *extra: str) -> dict:
    from vault_kg.anchors.check import check as run_check
    from vault_kg.core.scopes import vault_scope

    as_of = None
    if "--as-of" in extra:
        as_of = extra[extra.index("--as-of") + 1]
    return run_check(vault_scope(world.vault), None, "--strict" in extra, as_of)


def dirty(report: dict) -> dict[str, str]:
    return {d["id"]: d["reason"] for d in report["dirty"]}
