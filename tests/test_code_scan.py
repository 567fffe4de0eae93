"""Listing a repository: ignore rules, skipped folders, symlinks, size cap."""

from __future__ import annotations

import os
import time
from pathlib import Path

import networkx

from extract.code_scan import list_sources


def _write(root: Path, relpath: str, content: str | bytes = "x = 1\n") -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)


def test_gitignore_kgignore_and_fixed_skips(tmp_path: Path) -> None:
    for rel in [
        "src/a.py",
        "src/b.ts",
        "src/gen/out.py",
        "src/keep.log.py",
        "lib/x.go",
        "notes.md",
        "node_modules/m/index.js",
        "build/b.py",
        "dist/d.js",
        "target/t.rs",
        "vendor/v.go",
        "third_party/t.py",
        "kg-out/k.py",
        ".git/hooks/h.py",
        ".venv/lib/v.py",
        "env/lib/site.py",
        "__pycache__/c.py",
        "pkg/sub/secret.py",
        "pkg/sub/open.py",
        "pkg/sub/nested/deep.py",
        "main.rs",
    ]:
        _write(tmp_path, rel)
    _write(tmp_path, "env/pyvenv.cfg", "home = /usr\n")
    _write(tmp_path, ".gitignore", "src/gen/\n*.rs\n")
    _write(tmp_path, ".kgignore", "lib/\n")
    _write(tmp_path, "pkg/sub/.gitignore", "secret.py\nnested/\n")
    sources, skips = list_sources(tmp_path)
    assert sources == ["pkg/sub/open.py", "src/a.py", "src/b.ts", "src/keep.log.py"]
    assert skips == []


def test_size_cap_and_unreadable_are_reported(tmp_path: Path) -> None:
    _write(tmp_path, "big.py", "x = 1\n" * 100)
    _write(tmp_path, "small.py")
    sources, skips = list_sources(tmp_path, max_bytes=100)
    assert sources == ["small.py"]
    assert [s.relpath for s in skips] == ["big.py"]
    assert "cap" in skips[0].reason and ".kgignore" in skips[0].reason


def test_symlinks_out_of_the_repo_and_cycles_are_not_followed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    outside = tmp_path / "outside"
    _write(outside, "secret.py")
    _write(repo, "real/a.py")
    os.symlink(outside / "secret.py", repo / "leak.py")
    os.symlink(outside, repo / "leakdir")
    os.symlink(repo, repo / "real" / "loop")
    os.symlink(repo / "real" / "a.py", repo / "alias.py")
    os.symlink(repo / "missing.py", repo / "dangling.py")
    sources, skips = list_sources(repo)
    assert sources == ["alias.py", "real/a.py"]
    reasons = {s.relpath: s.reason for s in skips}
    assert reasons["leak.py"].startswith("symlink leaves the repository")
    assert reasons["leakdir"].startswith("symlink leaves the repository")
    assert reasons["dangling.py"].startswith("broken symlink")
    assert "real/loop" not in sources


def test_empty_repository(tmp_path: Path) -> None:
    _write(tmp_path, "README.md", "# nothing\n")
    assert list_sources(tmp_path) == ([], [])


def test_go_mod_is_listed_for_import_resolution(tmp_path: Path) -> None:
    _write(tmp_path, "go.mod", "module example.com/x\n")
    _write(tmp_path, "main.go", "package main\n")
    assert list_sources(tmp_path)[0] == ["go.mod", "main.go"]


def test_listing_networkx_is_fast() -> None:
    root = Path(networkx.__file__).parent
    list_sources(root)
    start = time.perf_counter()
    sources, _ = list_sources(root)
    elapsed = time.perf_counter() - start
    assert len(sources) > 400
    assert elapsed < 10  # a hang guard only: the figure (about 5 ms) is printed by bench/code_vs_graphify.py
