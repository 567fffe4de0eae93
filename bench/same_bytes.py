"""Build the same scopes with two checkouts of kg and compare the artifacts byte for byte.

    python bench/same_bytes.py --old ../main --work /tmp/same-bytes [--code NAME=DIR ...]

Each checkout needs its own `.venv` (`python3 -m venv .venv && .venv/bin/pip install -e .`).
The scopes: the example vault, a generated vault of `--notes` notes (bench/gen_vault.py), this
repository as a code scope, and every `--code NAME=DIR`. Each is copied once under `--work`, so
both builds see the same files at the same path (graph.json records its root); each side builds
from scratch (`kg build`, the model pass off, graph.html drawn in-process) and its graph.json,
GRAPH_REPORT.md, brief.json and graph.html are compared with `cmp`. Exit 1 when any differs.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ("graph.json", "GRAPH_REPORT.md", "brief.json", "graph.html")
CONFIG = "[ollama]\nenabled = false\n\n[projects]\n"


def _copy_tree(source: Path, target: Path) -> None:
    """The files git tracks in `source` (a checkout), else the whole folder, without artifacts or venvs."""
    if target.exists():
        return
    listed = subprocess.run(["git", "-C", str(source), "ls-files", "-z"], capture_output=True, check=False)
    if listed.returncode == 0 and listed.stdout:
        for rel in sorted(filter(None, listed.stdout.decode().split("\0"))):
            if (source / rel).is_file():
                (target / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source / rel, target / rel)
    else:
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("kg-out", ".venv", ".git"))


def scopes(work: Path, notes: int, code: list[str]) -> list[tuple[str, str, Path]]:
    """(kind, name, root) of every scope, laid out under `work`."""
    found = [("vault", "example", work / "example")]
    if not found[0][2].exists():
        shutil.copytree(ROOT / "examples" / "vault", found[0][2])
    generated = work / f"generated-{notes}"
    if not generated.exists():
        subprocess.run([sys.executable, str(ROOT / "bench" / "gen_vault.py"), str(generated), "--notes", str(notes)], check=True)
    found.append(("vault", generated.name, generated))
    for name, source in [("kg", str(ROOT)), *(item.split("=", 1) for item in code)]:
        _copy_tree(Path(source), work / "code" / name)
        found.append(("code", name, work / "code" / name))
    return found


def build(checkout: Path, kind: str, name: str, root: Path, config: Path, keep: Path) -> None:
    """A from-scratch build of one scope with `checkout`'s kg; the artifacts copied to `keep`."""
    shutil.rmtree(root / "kg-out", ignore_errors=True)
    env = {**os.environ, "KG_CONFIG": str(config), "KG_HTML": "inline", "KG_PUSH_RECALL": "off"}
    args = ["build", "--vault", str(root)] if kind == "vault" else ["build", "--scope", name]
    subprocess.run([str(checkout / ".venv" / "bin" / "kg"), *args], env=env, check=True, capture_output=True, cwd=str(root.parent))
    keep.mkdir(parents=True, exist_ok=True)
    for file in FILES:
        if (root / "kg-out" / file).exists():
            shutil.copy2(root / "kg-out" / file, keep / file)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the other checkout (with its .venv)")
    parser.add_argument("--new", type=Path, default=ROOT)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--notes", type=int, default=3000)
    parser.add_argument("--code", action="append", default=[], help="NAME=DIR: another repository to build as a code scope")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    config = args.work / "config.toml"
    found = scopes(args.work, args.notes, args.code)
    config.write_text(CONFIG + "".join(f'{name} = "{root}"\n' for kind, name, root in found if kind == "code"), encoding="utf-8")
    differ = 0
    for kind, name, root in found:
        sides = {side: args.work / "out" / name / side for side in ("old", "new")}
        for side, checkout in (("old", args.old), ("new", args.new)):
            build(checkout.resolve(), kind, name, root, config, sides[side])
        for file in FILES:
            a, b = sides["old"] / file, sides["new"] / file
            if not a.exists() and not b.exists():
                continue
            same = a.exists() and b.exists() and filecmp.cmp(a, b, shallow=False)
            differ += not same
            print(f"{'same' if same else 'DIFFERS'}  {name:>16}  {file:<16} {b.stat().st_size if b.exists() else 0:>12,} bytes")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import record

    with record("same_bytes"):
        status = main()
    sys.exit(status)
