"""The window a vault write leaves open to another program, measured (docs/safety.md quotes it).

kg's write (`vault_kg.core.safe_write.rewrite`) re-reads a note before installing its change and
re-applies the change when another program wrote the note meanwhile. An append is written in
place (O_APPEND): no window. Any other change is renamed over the note, and a write by another
program between the last check (a `stat`) and the end of the rename is replaced: this bench
times that interval on every edit (the `os` calls of the write are timed where they happen), then
races an outside process that appends a line every 5 or 20 ms against kg's edits, then against
kg's appends, as fast as kg can write, and counts what was written, refused and lost.

Usage: python bench/write_window.py [--edits 1000] [--race-s 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
NOTE = "---\nsummary: A note kg edits\ntags: [topic/bench, scope/bench]\n---\n# Bench\n\nstate A\n" + "".join(f"Line {i} of a 4 KB note body.\n" for i in range(120))
EDITOR = """
import os, sys, time
path, until, every, n = sys.argv[1], time.monotonic() + float(sys.argv[2]), float(sys.argv[3]), 0
while time.monotonic() < until:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, f"outside line {n}\\n".encode())
    os.close(fd)
    n += 1
    time.sleep(every)
print(n)
"""


class TimedOs:
    """The `os` module, with the write's last check (`stat`) and its `replace` timed."""

    def __init__(self) -> None:
        self.checked = 0
        self.windows: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def stat(self, *args: Any, **kwargs: Any) -> os.stat_result:
        self.checked = time.perf_counter_ns()
        return os.stat(*args, **kwargs)

    def replace(self, *args: Any, **kwargs: Any) -> None:
        os.replace(*args, **kwargs)
        self.windows.append(time.perf_counter_ns() - self.checked)


def scope(folder: Path) -> Any:
    from vault_kg.core.scopes import Scope

    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "Bench.md").write_text(NOTE, encoding="utf-8")
    return Scope("vault", "vault", folder, folder / "kg-out")


def window(edits: int) -> None:
    from vault_kg.core import safe_write
    from vault_kg.notes.notebook import append_note, edit_note

    timed = TimedOs()
    safe_write.os = timed  # type: ignore[assignment]
    with tempfile.TemporaryDirectory(prefix="kg-window-") as tmp:
        vault = scope(Path(tmp))
        whole = []
        for i in range(edits):
            old, new = ("state A", "state B") if i % 2 == 0 else ("state B", "state A")
            started = time.perf_counter()
            edit_note(vault, "notes/Bench.md", old, new)
            whole.append(time.perf_counter() - started)
        appends = []
        for i in range(edits // 4):
            started = time.perf_counter()
            append_note(vault, "notes/Bench.md", f"appended {i}")
            appends.append(time.perf_counter() - started)
    safe_write.os = os  # type: ignore[assignment]
    micro = sorted(w / 1000 for w in timed.windows)
    print(f"rename path (kg note edit of a {len(NOTE.encode()) // 1024} KB note, in-process), {edits} edits")
    print(f"  last check -> rename done:  median {statistics.median(micro):.1f} µs, p99 {micro[int(len(micro) * 0.99) - 1]:.1f} µs, max {micro[-1]:.1f} µs")
    print(f"  the whole edit (lock, read, change, temp file, fsync, re-read, rename): median {statistics.median(whole) * 1000:.2f} ms")
    print(f"append path (O_APPEND in place, no rename: no window), {len(appends)} appends: median {statistics.median(appends) * 1000:.2f} ms")


def race(seconds: float, every_ms: float, kind: str) -> None:
    from vault_kg.core.errors import KgError
    from vault_kg.notes.notebook import append_note, edit_note

    with tempfile.TemporaryDirectory(prefix="kg-race-") as tmp:
        vault = scope(Path(tmp))
        note = vault.root / "notes" / "Bench.md"
        editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(note), str(seconds), str(every_ms / 1000)], stdout=subprocess.PIPE, text=True)
        done, refused, until = 0, 0, time.monotonic() + seconds
        while time.monotonic() < until:
            try:
                if kind == "edit":
                    old, new = ("state A", "state B") if done % 2 == 0 else ("state B", "state A")
                    edit_note(vault, "notes/Bench.md", old, new)
                else:
                    append_note(vault, "notes/Bench.md", f"kg line {done}")
                done += 1
            except KgError:
                refused += 1  # "another program kept changing it": refused in one line, nothing written
        written = int(editor.communicate(timeout=60)[0])
        text = note.read_text(encoding="utf-8")
        lost = sum(1 for n in range(written) if f"outside line {n}\n" not in text)
        kg_lost = sum(1 for n in range(done) if f"kg line {n}\n" not in text) if kind == "append" else 0
    print(f"  every {every_ms:g} ms, kg {kind}s: {done:>4} written, {refused:>3} refused   outside lines: {written:>5}, lost: {lost}" + (f"   kg lines lost: {kg_lost}" if kind == "append" else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--race-s", type=float, default=10.0)
    args = parser.parse_args()
    os.environ.setdefault("KG_CONFIG", str(Path(tempfile.mkdtemp(prefix="kg-window-config-")) / "config.toml"))
    window(args.edits)
    print(f"race: an outside process appends a line every few ms for {args.race_s:g} s while kg writes the same note as fast as it can")
    for every in (5.0, 20.0):
        race(args.race_s, every, "edit")
        race(args.race_s, every, "append")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("write_window"):
        main()
