"""Figures for `kg sync`, `kg promote --suggest` and `kg consolidate --plan` on a synthetic vault.

Every figure is an IN-PROCESS call of the library function the command runs (no interpreter
start-up or imports); the output says so on each line.

Usage: python bench/vaultops_bench.py [--notes 2000] [--edits 10] [--seed 7]

Two clones of a bare repository on disk stand for two machines: the laptop edits `--edits`
notes and syncs; the VPS syncs and pulls them (git + the incremental graph update).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_vault import generate  # noqa: E402

from vault_kg.notes import consolidate
from vault_kg.notes import promote
from vault_kg.notes import sync
from vault_kg.update.engine import run  # noqa: E402
from vault_kg.core.scopes import vault_scope  # noqa: E402


def timed(label: str, fn, *args, **kwargs):
    started = time.perf_counter()
    result = fn(*args, **kwargs)
    print(f"{label:<52} {time.perf_counter() - started:8.2f} s  (in-process)")
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    os.environ.setdefault("KG_OLLAMA", "off")
    for key, value in {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@invalid", "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@invalid"}.items():
        os.environ.setdefault(key, value)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        laptop = root / "laptop"
        paths = generate(laptop, args.notes, args.seed)
        print(f"vault: {args.notes} notes")
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(root / "remote.git")], check=True)
        subprocess.run(["git", "-C", str(laptop), "init", "-q", "-b", "main"], check=True)
        subprocess.run(["git", "-C", str(laptop), "remote", "add", "origin", str(root / "remote.git")], check=True)
        timed("kg sync, first (commit all + push + full build)", sync.sync, laptop)
        vps = root / "vps"
        subprocess.run(["git", "clone", "-q", str(root / "remote.git"), str(vps)], check=True)
        timed("kg sync on a fresh clone (full build)", sync.sync, vps)
        for path in paths[: args.edits]:
            path.write_text(path.read_text() + "\nEdited on the laptop.\n")
        report = timed(f"kg sync, laptop: commit {args.edits} edits + push + update", sync.sync, laptop)
        assert len(report.committed_files) == args.edits
        report = timed(f"kg sync, vps: pull {args.edits} notes + update", sync.sync, vps)
        assert len(report.pulled_files) == args.edits
        timed("kg sync, nothing to do", sync.sync, vps)
        timed("kg sync --status (with fetch)", sync.status, vps)
        scope = vault_scope(laptop)
        run(scope)
        found = timed("kg promote --suggest --min 2", promote.suggest, scope, 2)
        print(f"    {len(found)} candidates")
        data = timed("kg consolidate --plan", consolidate.plan, laptop)
        kinds: dict[str, int] = {}
        for action in data["actions"]:
            kinds[action["action"]] = kinds.get(action["action"], 0) + 1
        print(f"    {len(data['actions'])} actions {kinds}, {len(data['review'])} for review")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("vaultops_bench"):
        main()
