"""The guard under every write `kg` makes into the vault: inside it, writable, no secrets, safe.

The path cannot escape the vault (no `..`, absolute paths, symlinks, hidden folders, `kg-out/` in
any letter case), a read-only note is left alone, and text that looks like a secret is refused
rather than written. The write itself is `vault_kg.core.safe_write.rewrite`: one kg writer per
file, the change re-applied to what is on disk, atomic, keeping mode, owner and extended
attributes. `rewrite_plain` is the whole guard for files outside the note contract (the journal's
day files); `vault_kg.notes.vault_write` adds the frontmatter contract and the `scope/global` rule
on top for notes. It lives in the core so that `episodic` can write its day files through it
without depending on the library.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath
from typing import Callable

from vault_kg.core.errors import KgError
from vault_kg.core.safe_read import display_name, valid_name
from vault_kg.core.secrets import find_secrets

__all__ = ["RESERVED_FOLDERS", "check_writable", "refuse_secrets", "rewrite_plain", "safe_relpath"]

# Folders the vault scanner never reads (extract.notes.SKIP_DIRS): a note written there would never
# reach the graph, and `kg-out/` holds artifacts. Compared case-insensitively, because on a
# case-insensitive file system `KG-OUT/x.md` is `kg-out/x.md`.
RESERVED_FOLDERS = ("kg-out", "node_modules", "__pycache__")


def safe_relpath(vault: Path, relpath: str) -> Path:
    """The absolute path of a vault note named by a user or an agent, or a clear refusal."""
    raw = relpath.strip().replace("\\", "/")
    pure = PurePosixPath(raw)
    if not raw or pure.is_absolute() or raw.startswith("~"):
        raise KgError(f"'{relpath}': give a path relative to the vault, like `notes/Topic.md`")
    if any(ord(ch) < 32 for ch in raw):
        raise KgError(f"{relpath!r}: control characters (NUL, newline…) in a note path; refused")
    if not valid_name(raw):
        raise KgError(f"'{display_name(relpath)}': the path holds bytes that are not UTF-8; name the note in UTF-8")
    if any(len(part.encode("utf-8")) > 255 for part in pure.parts):
        raise KgError(f"'{relpath[:60]}…': a file or folder name is over 255 bytes; use a shorter name")
    if any(part in ("..", "") for part in pure.parts) or any(part.startswith(".") for part in pure.parts):
        raise KgError(f"'{relpath}': path escapes the vault or enters a hidden folder; refused")
    folded = [part.casefold().rstrip(". ") for part in pure.parts[:-1]]
    if folded and folded[0] == "kg-out":
        raise KgError(f"'{relpath}': kg-out/ holds rebuildable artifacts, not notes; refused")
    reserved = next((part for part, low in zip(pure.parts, folded) if low in RESERVED_FOLDERS), None)
    if reserved is not None:
        raise KgError(f"'{relpath}': the vault scanner skips `{reserved}/` folders, so a note there would never be read; pick another folder")
    if pure.suffix.lower() != ".md":
        raise KgError(f"'{relpath}': notes are markdown files; end the name with .md")
    root = vault.resolve()
    target = root.joinpath(*pure.parts)
    parent = target.parent
    while not parent.exists() and parent != root:
        parent = parent.parent
    if not parent.resolve().is_relative_to(root):  # a prefix test let `vault-evil/` pass for `vault/`
        raise KgError(f"'{relpath}': a folder on the way is a symlink out of the vault; refused")
    if target.is_symlink() or (target.exists() and not target.resolve().is_relative_to(root)):
        raise KgError(f"'{relpath}': is a symlink; kg does not write through links")
    return target


def check_writable(target: Path, relpath: str) -> None:
    """Refuse a note its owner made read-only (or that this user may not write): kg never forces a write."""
    try:
        st = target.stat()
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise KgError(f"{relpath}: is not a regular file; kg writes only ordinary note files (nothing written)")
    if not st.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise KgError(f"{relpath}: is read-only; make it writable (chmod u+w) or leave it as it is (nothing written)")


def refuse_secrets(relpath: str, text: str) -> None:
    """Refuse text that looks like a secret: it is never written into the vault."""
    secrets = find_secrets(text)
    if secrets:
        raise KgError(f"{relpath}: refused: the text contains what looks like a secret ({', '.join(sorted(set(secrets)))}); remove it and keep secrets in a password manager")


def rewrite_plain(vault: Path, relpath: str, change: Callable[[str | None], str], *, scan: str | None = None, timeout: float | None = None, noun: str = "the file") -> str:
    """The guard and the write for a file outside the note contract; returns the text written.

    `change` gets the file's current text (None: none yet) and may run again on newer text (see
    `safe_write.rewrite`); `scan` is the new part that must hold no secret (default: all of it)."""
    from vault_kg.core.safe_write import rewrite

    target = safe_relpath(vault, relpath)

    def guarded(old: str | None) -> str:
        check_writable(target, relpath)
        new = change(old)
        refuse_secrets(relpath, new if scan is None else scan)
        return new

    return rewrite(vault, target, relpath, guarded, timeout=timeout, noun=noun)
