"""The one way `kg` writes into the vault: inside it, in the frontmatter contract, without secrets.

Every write by `kg` (remember, anchors, supersede, promote, consolidate, the journal) goes through
`write_note`, so the guardrails hold in one place: the path cannot escape the vault (no `..`,
absolute paths, symlinks, hidden folders, `kg-out/` in any letter case), a read-only note is left
alone, the note must pass the frontmatter contract, and text that looks like a secret is refused
rather than written. The write is atomic and keeps the file's mode and owner.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from .core.errors import KgError
from .core.secrets import find_secrets
from .core.store import atomic_write

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


def check_text(relpath: str, text: str, contract: bool = True, scan: str | None = None) -> None:
    """Refuse secrets always (in `scan`, the new part, when given), and contract violations when `contract` is set."""
    secrets = find_secrets(text if scan is None else scan)
    if secrets:
        raise KgError(f"{relpath}: refused: the text contains what looks like a secret ({', '.join(sorted(set(secrets)))}); remove it and keep secrets in a password manager")
    if not contract:
        return
    from extract.notes import extract_note

    from .lint import check_note

    problems = check_note(extract_note(relpath, text.encode("utf-8")))
    if problems:
        raise KgError(f"{relpath}: refused: {problems[0].message}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""))


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


def check_not_promoting(target: Path, relpath: str, text: str, vault: Path) -> None:
    """Refuse a new `scope/global` tag (the PreToolUse guardrail's own rule): that is `kg promote`'s job."""
    from .guardrails import new_global_tag
    from .core.safe_read import read_regular

    before = read_regular(target, root=vault).decode("utf-8-sig", "replace") if target.exists() else None
    refusal = new_global_tag(relpath, before, text)
    if refusal is not None:
        raise KgError(refusal.reason.removeprefix("vault-kg: ") + " (nothing written)")


def prepare_note(
    vault: Path, relpath: str, text: str, *, create: bool = False, contract: bool = True, scan: str | None = None, promotion: bool = False,
) -> Path:
    """Every guardrail of `write_note`, without writing: callers that write several notes check them all first.

    `scan` is the part of `text` that is new (default: all of it); only that part must be free of
    secrets, so appending to a file that already holds one is still possible. A contract note may
    newly carry `scope/global` only with `promotion` (`kg promote`, or a `kg consolidate` plan the
    user applies): MCP writes never pass the PreToolUse hook, so the rule is held here too.
    """
    target = safe_relpath(vault, relpath)
    if create and target.exists():
        raise KgError(f"{relpath}: already exists; pick another name or edit the note")
    check_writable(target, relpath)
    check_text(relpath, text, contract, scan)
    if contract and not promotion:
        check_not_promoting(target, relpath, text, vault)
    return target


def write_note(
    vault: Path, relpath: str, text: str, *, create: bool = False, contract: bool = True, scan: str | None = None, promotion: bool = False,
) -> Path:
    """Write a whole note atomically after the guardrails pass. `create` refuses to overwrite."""
    target = prepare_note(vault, relpath, text, create=create, contract=contract, scan=scan, promotion=promotion)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, text.encode("utf-8"))
    except OSError as exc:
        raise KgError(f"{relpath}: cannot write the note ({exc.strerror or exc}); check that the vault folder is writable (nothing written)") from exc
    return target


def render_note(summary: str, tags: list[str], body: str, extra: dict[str, object] | None = None) -> str:
    """A note in the contract: YAML frontmatter (summary, tags, extra keys) and the body."""
    import yaml

    front: dict[str, object] = {"summary": " ".join(summary.split())}
    front.update(extra or {})
    front["tags"] = list(tags)
    dumped = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10_000).strip()
    return f"---\n{dumped}\n---\n{body.rstrip()}\n"
