"""The one way `kg` writes a note into the vault: the core's write guard plus the frontmatter contract.

Every note `kg` writes (remember, anchors, supersede, promote, consolidate) goes through
`write_note`: `vault_kg.core.vault_guard` holds the path, permission and secret guard and the atomic
write (the journal's day files use that guard alone), and this module adds the frontmatter contract
and the rule that a new `scope/global` tag comes only through `kg promote`.
"""

from __future__ import annotations

from pathlib import Path

from vault_kg.core.errors import KgError
from vault_kg.core.vault_guard import check_writable, refuse_secrets, safe_relpath, write_checked

__all__ = ["check_not_promoting", "check_text", "prepare_note", "render_note", "write_note"]


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


def check_not_promoting(target: Path, relpath: str, text: str, vault: Path) -> None:
    """Refuse a new `scope/global` tag (the PreToolUse guardrail's own rule): that is `kg promote`'s job."""
    from vault_kg.memory.guardrails import new_global_tag
    from vault_kg.core.safe_read import read_regular

    before = read_regular(target, root=vault).decode("utf-8-sig", "replace") if target.exists() else None
    refusal = new_global_tag(relpath, before, text)
    if refusal is not None:
        raise KgError(refusal.reason.removeprefix("vault-kg: ") + " (nothing written)")


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
    vault: Path,
    relpath: str,
    text: str,
    *,
    create: bool = False,
    contract: bool = True,
    scan: str | None = None,
    promotion: bool = False,
) -> Path:
    """Write a whole note atomically after the guardrails pass. `create` refuses to overwrite."""
    target = prepare_note(vault, relpath, text, create=create, contract=contract, scan=scan, promotion=promotion)
    return write_checked(target, relpath, text)


def render_note(summary: str, tags: list[str], body: str, extra: dict[str, object] | None = None) -> str:
    """A note in the contract: YAML frontmatter (summary, tags, extra keys) and the body."""
    import yaml

    front: dict[str, object] = {"summary": " ".join(summary.split())}
    front.update(extra or {})
    front["tags"] = list(tags)
    dumped = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10_000).strip()
    return f"---\n{dumped}\n---\n{body.rstrip()}\n"
