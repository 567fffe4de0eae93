"""The one way `kg` writes a note into the vault: the core's write guard plus the frontmatter contract.

Every note `kg` writes (remember, append, edit, anchors, supersede, promote, consolidate, sync's
journal merge) goes through `change_note`: `vault_kg.core.vault_guard` holds the path, permission
and secret guard, `vault_kg.core.safe_write` the write (one kg writer per file, re-applied to what
another program wrote meanwhile, atomic, mode, owner and extended attributes kept), and this
module adds the frontmatter contract and the rule that a new `scope/global` tag comes only through
`kg promote`. `write_note` writes a whole text computed from an earlier read: it is refused when
the note changed since (`based_on`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from vault_kg.core.errors import KgError
from vault_kg.core.vault_guard import check_writable, refuse_secrets, safe_relpath

__all__ = ["change_note", "check_not_promoting", "check_text", "meets_contract", "prepare_note", "read_current", "render_note", "write_note"]


def check_text(relpath: str, text: str, contract: bool = True, scan: str | None = None) -> None:
    """Refuse secrets always (in `scan`, the new part, when given), and contract violations when `contract` is set."""
    refuse_secrets(relpath, text if scan is None else scan)
    if not contract:
        return
    from extract.notes import extract_note

    from vault_kg.notes.lint import check_note

    problems = check_note(extract_note(relpath, text.encode("utf-8")))
    if problems:
        raise KgError(f"{relpath}: refused: {problems[0].message}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""))


def meets_contract(relpath: str, text: str) -> bool:
    """True when the note's text meets the frontmatter contract (a write must keep it so)."""
    from extract.notes import extract_note

    from vault_kg.notes.lint import check_note

    return not check_note(extract_note(relpath, text.encode("utf-8")))


def read_current(vault: Path, relpath: str) -> str | None:
    """The note's text as it is now (None: no such file), read through the one reader; one line if unreadable."""
    from vault_kg.core.safe_read import read_regular
    from vault_kg.core.safe_write import MAX_BYTES

    target = safe_relpath(vault, relpath)
    try:
        data = read_regular(target, MAX_BYTES, root=vault)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise KgError(f"{relpath}: cannot read the note ({exc.strerror or exc}); nothing written") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KgError(f"{relpath}: not UTF-8 text (byte {exc.start}); re-save it as UTF-8 first (nothing written)") from exc


def check_not_promoting(relpath: str, before: str | None, text: str) -> None:
    """Refuse a new `scope/global` tag (the PreToolUse guardrail's own rule): that is `kg promote`'s job."""
    from vault_kg.memory.guardrails import new_global_tag

    refusal = new_global_tag(relpath, before, text)
    if refusal is not None:
        raise KgError(refusal.reason.removeprefix("vault-kg: ") + " (nothing written)")


def _check(relpath: str, before: str | None, text: str, contract: bool | None, scan: str | None, promotion: bool) -> None:
    """Every rule a note write keeps, on the text before and after it. `contract=None`: as before
    (a note that met the contract must still meet it; one that never did may be written as it is).
    The `scope/global` rule holds whatever the contract says (an adopted vault's notes mostly
    have no `scope/` tag yet, and used to let it through)."""
    from vault_kg.core.safe_write import encoded

    encoded(text, relpath)
    met = contract if contract is not None else (before is None or meets_contract(relpath, before))
    check_text(relpath, text, met, scan)
    if not promotion:
        check_not_promoting(relpath, before, text)


def prepare_note(
    vault: Path,
    relpath: str,
    text: str,
    *,
    create: bool = False,
    contract: bool = True,
    scan: str | None = None,
    promotion: bool = False,
) -> Path:
    """Every guardrail of `write_note`, without writing: callers that write several notes check them all first.

    `scan` is the part of `text` that is new (default: all of it); only that part must be free of
    secrets, so appending to a file that already holds one is still possible. A note may newly
    carry `scope/global` only with `promotion` (`kg promote`, or a `kg consolidate` plan the user
    applies): MCP writes never pass the PreToolUse hook, so the rule is held here too.
    """
    target = safe_relpath(vault, relpath)
    if create and target.exists():
        raise KgError(f"{relpath}: already exists; pick another name or edit the note")
    check_writable(target, relpath)
    _check(relpath, read_current(vault, relpath), text, contract, scan, promotion)
    return target


def change_note(
    vault: Path,
    relpath: str,
    change: Callable[[str | None], str],
    *,
    create: bool = False,
    contract: bool | None = True,
    scan: str | None = None,
    promotion: bool = False,
) -> tuple[Path, str]:
    """Apply `change` (current text, None for a new file -> new text) under every guardrail, and
    write the result safely (`safe_write.rewrite`: `change` runs again on what another program
    wrote meanwhile). Returns the path and the text written. `create` refuses an existing note."""
    from vault_kg.core.safe_write import rewrite

    target = safe_relpath(vault, relpath)

    def guarded(before: str | None) -> str:
        check_writable(target, relpath)
        text = change(before)
        _check(relpath, before, text, contract, scan, promotion)
        return text

    return target, rewrite(vault, target, relpath, guarded, create=create)


def write_note(
    vault: Path,
    relpath: str,
    text: str,
    *,
    based_on: str | None = None,
    create: bool = False,
    contract: bool = True,
    scan: str | None = None,
    promotion: bool = False,
) -> Path:
    """Write a whole note after the guardrails pass. The note must still hold `based_on`, the text
    `text` was computed from (None: no note was there), so another program's write since is never
    overwritten: the write is refused with one line. `create` refuses an existing note outright."""

    def replace(before: str | None) -> str:
        if not create and before != based_on:
            raise KgError(f"{relpath}: changed since kg read it (another program wrote it meanwhile); nothing written, run the command again")
        return text

    return change_note(vault, relpath, replace, create=create, contract=contract, scan=scan, promotion=promotion)[0]


def render_note(summary: str, tags: list[str], body: str, extra: dict[str, object] | None = None) -> str:
    """A note in the contract: YAML frontmatter (summary, tags, extra keys) and the body."""
    import yaml

    front: dict[str, object] = {"summary": " ".join(summary.split())}
    front.update(extra or {})
    front["tags"] = list(tags)
    dumped = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10_000).strip()
    return f"---\n{dumped}\n---\n{body.rstrip()}\n"
