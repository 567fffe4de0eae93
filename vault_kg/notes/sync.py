"""`kg sync`: the vault travels between machines as a git repository; graphs never do.

One sync commits the notes changed here (the message lists them), pulls with rebase, pushes,
then updates this machine's graph for the notes the pull brought (and the ones committed here).
Notes in conflict are never resolved for the user: the rebase is left in progress, the files are
named, and the exact commands to continue or abort are printed. Journal day notes are the
exception by design: append-only, they merge as the union of their entries (the `kg-journal`
merge driver, and the same merge applied here if a rebase stops on one anyway).
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import shutil
import socket
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vault_kg.core.config import OUT_DIRNAME
from vault_kg.core.errors import KgError
from vault_kg.notes.gitops import (
    Repo,
    head,
    identity_missing,
    last_line,
    open_repo,
    operation_in_progress,
    run_git,
    status_entries,
    unmerged_paths,
    z_split,
)
from vault_kg.notes.journal_merge import merge_day
from vault_kg.core.safe_read import display_name, read_text
from vault_kg.core.secrets import find_secrets, redact
from vault_kg.core.store import atomic_write

__all__ = [
    "ATTRIBUTE_LINE",
    "DRIVER_NAME",
    "EDITED_RETRIES",
    "IGNORE_LINE",
    "JOURNAL_PATTERN",
    "MAX_REBASE_STEPS",
    "MAX_SECRET_SCAN_BYTES",
    "SECRET_SCAN_OVERLAP",
    "SyncConflict",
    "SyncReport",
    "SyncStatus",
    "driver_command",
    "format_report",
    "format_status",
    "scan_file",
    "setup",
    "status",
    "sync",
]

JOURNAL_PATTERN = "journal/*.md"
DRIVER_NAME = "kg-journal"
ATTRIBUTE_LINE = f"{JOURNAL_PATTERN} merge={DRIVER_NAME}"
IGNORE_LINE = f"{OUT_DIRNAME}/"
MAX_REBASE_STEPS = 1000
EDITED_RETRIES = 5
_EDITED_MEANWHILE = ("You have unstaged changes", "Your index contains uncommitted changes")  # git's words (LC_ALL=C)
MAX_SECRET_SCAN_BYTES = 4 * 1024 * 1024
SECRET_SCAN_OVERLAP = 64 * 1024


class SyncConflict(KgError):
    """A rebase stopped on notes the user must resolve; the report says which and how."""

    def __init__(self, message: str, report: "SyncReport") -> None:
        super().__init__(message)
        self.report = report


@dataclass
class SyncReport:
    vault: str
    branch: str = ""
    upstream: str = ""
    committed: str | None = None
    committed_files: list[str] = field(default_factory=list)
    pulled_files: list[str] = field(default_factory=list)
    journal_merged: list[str] = field(default_factory=list)
    pushed: bool = False
    conflicts: list[str] = field(default_factory=list)
    continue_command: str = ""
    abort_command: str = ""
    update: dict[str, Any] | None = None
    notices: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SyncStatus:
    vault: str
    branch: str
    upstream: str
    ahead: int
    behind: int
    uncommitted: list[dict[str, str]]
    in_progress: str | None
    conflicts: list[str]
    fetched: bool
    notices: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def driver_command() -> str:
    """The merge-driver command line: this installation's `kg`, found next to the interpreter."""
    beside = Path(sys.executable).parent / "kg"
    exe = str(beside) if beside.is_file() else (shutil.which("kg") or "kg")
    return f"{shlex.quote(exe)} merge-journal %O %A %B %P"


def _ensure_line(path: Path, line: str) -> bool:
    """Append `line` to a git config file of the vault (.gitignore, .gitattributes) unless present."""
    from vault_kg.core.safe_write import rewrite

    added: list[bool] = []

    def append(text: str | None) -> str:
        text = text or ""
        added[:] = [line not in (raw.strip() for raw in text.splitlines())]
        return text + ("" if not text or text.endswith("\n") else "\n") + line + "\n" if added[0] else text

    rewrite(path.parent, path, path.name, append)
    return added[0]


def setup(vault: Path, init: bool = False) -> tuple[Repo, list[str]]:
    """Make the vault ready to sync: a repository, `kg-out/` ignored, the journal merge driver set.

    `.gitignore` and `.gitattributes` are git's own files, not notes, so they are the only files
    sync writes without `write_note`; it only ever appends one line to each.
    """
    notices: list[str] = []
    if init and run_git(vault, "rev-parse", "--show-toplevel", check=False).returncode != 0:
        run_git(vault, "init", "-q")
        notices.append(f"initialised a git repository in {vault}; add a remote with `git -C '{vault}' remote add origin URL`")
    repo = open_repo(vault)
    if _ensure_line(vault / ".gitignore", IGNORE_LINE):
        notices.append(f"added `{IGNORE_LINE}` to .gitignore (graphs are rebuilt per machine, never synced)")
    if _ensure_line(vault / ".gitattributes", ATTRIBUTE_LINE):
        notices.append(f"added `{ATTRIBUTE_LINE}` to .gitattributes (journal notes merge by union of entries)")
    if repo.git("ls-files", "--", OUT_DIRNAME).stdout.strip():
        notices.append(f"{OUT_DIRNAME}/ is tracked by git from before; untrack it with `git -C '{vault}' rm -r -q --cached {OUT_DIRNAME}`")
    repo.git("config", f"merge.{DRIVER_NAME}.name", "kg: union of journal entries")
    repo.git("config", f"merge.{DRIVER_NAME}.driver", driver_command())
    return repo, notices


def _branch(repo: Repo) -> str:
    proc = repo.git("symbolic-ref", "--short", "-q", "HEAD", check=False)
    if proc.returncode != 0:
        raise KgError(f"{repo.vault}: HEAD is detached; check out a branch (`git -C '{repo.vault}' switch main`) and sync again")
    return proc.stdout.strip()


def _branch_name(repo: Repo) -> str:
    """The current branch, or the branch being rebased while a rebase is in progress."""
    proc = repo.git("symbolic-ref", "--short", "-q", "HEAD", check=False)
    if proc.returncode == 0:
        return proc.stdout.strip()
    for folder in ("rebase-merge", "rebase-apply"):
        name = repo.git_dir / folder / "head-name"
        if name.is_file():
            return read_text(name, 4096).strip().removeprefix("refs/heads/")
    return "(detached)"


def _upstream(repo: Repo, branch: str = "") -> str:
    ref = f"{branch}@{{u}}" if branch and branch != "(detached)" else "@{u}"
    proc = repo.git("rev-parse", "--abbrev-ref", "--symbolic-full-name", ref, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _is_note(rel: str) -> bool:
    return rel.lower().endswith(".md")


def _commit_pending(repo: Repo, report: SyncReport) -> None:
    """Stage everything under the vault (kg-out/ is ignored) and commit it with a listing message."""
    if not status_entries(repo):
        return
    repo.git("add", "-A", "--", ".")
    out = repo.git("diff", "--cached", "--name-status", "-z", "--no-renames", "--", ".").stdout
    items = z_split(out)
    changes = [(items[i], repo.vault_rel(items[i + 1]) or items[i + 1]) for i in range(0, len(items) - 1, 2)]
    if not changes:
        return
    _refuse_secret_names(repo, [rel for _, rel in changes])
    _refuse_secrets(repo, [rel for code, rel in changes if code != "D"])
    verbs = {"A": "added", "M": "modified", "D": "deleted", "T": "modified"}
    notes = [(verbs.get(code[0], "changed"), display_name(rel)) for code, rel in changes if _is_note(rel)]
    others = [display_name(rel) for _, rel in changes if not _is_note(rel)]
    title = f"kg sync: {len(notes)} note{'s' if len(notes) != 1 else ''} from {socket.gethostname()}"
    body = redact("\n".join([f"{verb}: {rel}" for verb, rel in notes] + [f"other: {rel}" for rel in others]))
    # `-- .`: only the vault's paths, even when the vault is a folder of a larger repository in
    # which the user has other changes staged; the user's own pre-commit hook runs (no --no-verify).
    proc = repo.git("commit", "-q", "-m", redact(title), "-m", body, "--", ".", check=False)
    if proc.returncode != 0:
        repo.git("reset", "-q", "--", ".", check=False)
        if identity_missing(proc):
            raise KgError("git has no identity on this machine; run `git config --global user.name NAME` and `git config --global user.email EMAIL`, then kg sync")
        raise KgError(f"{repo.vault}: commit failed: {last_line(proc)}")
    report.committed = head(repo)
    report.committed_files += [display_name(rel) for _, rel in changes if display_name(rel) not in report.committed_files]


def _refuse_secret_names(repo: Repo, rels: list[str]) -> None:
    """A file or folder name that looks like a credential never leaves this machine either: git
    commits the name, and the commit message lists it."""
    for rel in rels:
        kinds = find_secrets(rel.replace("/", "\n"))  # each part on its own line, as a name is read
        if kinds:
            repo.git("reset", "-q", "--", ".", check=False)
            raise KgError(
                f"{repo.vault / redact(display_name(rel))}: refused to sync: its name holds what looks like a secret ({', '.join(sorted(set(kinds)))}); "
                "rename it and run kg sync again; nothing was committed"
            )


def _refuse_secrets(repo: Repo, rels: list[str]) -> None:
    """Nothing that looks like a credential leaves this machine: refuse before committing.

    Every changed file is scanned whole, whatever its size or encoding (see `scan_file`); a file
    that cannot be read is refused too, since what is committed is what git reads.
    """
    for rel in rels:
        path = repo.vault / rel
        try:
            kinds = scan_file(path)
        except OSError as exc:
            repo.git("reset", "-q", "--", ".", check=False)
            raise KgError(
                f"{path}: refused to sync: it could not be checked for secrets ({exc.strerror or exc}); fix its permissions (or remove it) and run kg sync again; nothing was committed"
            ) from exc
        if kinds:
            repo.git("reset", "-q", "--", ".", check=False)
            raise KgError(
                f"{path}: refused to sync: it holds what looks like a secret ({', '.join(sorted(set(kinds)))}); "
                "remove it (keep secrets in a password manager) and run kg sync again; nothing was committed"
            )


def scan_file(path: Path) -> list[str]:
    """The secret kinds in a file, read as git will commit it.

    Read in windows of `MAX_SECRET_SCAN_BYTES` that overlap (a secret across a boundary is still
    seen), so no size is too large to scan. Each window is decoded as UTF-8 and, when it holds NUL
    bytes (UTF-16, UTF-32), once more with them dropped, so an ASCII credential is found in any of
    these encodings; Latin-1 and other single-byte text keeps its ASCII bytes as they are. A
    symlink is committed as its target path, so that is what is scanned; a folder (a submodule)
    is a commit id.
    """
    from vault_kg.core.safe_read import open_regular

    if path.is_symlink():
        return _scan_window(os.readlink(path).encode("utf-8", "surrogateescape"))
    if path.is_dir():
        return []
    kinds: list[str] = []
    with open_regular(path) as handle:
        tail = b""
        while True:
            chunk = handle.read(MAX_SECRET_SCAN_BYTES - len(tail))
            if not chunk:
                break
            window = tail + chunk
            kinds += _scan_window(window)
            tail = window[-SECRET_SCAN_OVERLAP:]
    return kinds


def _scan_window(window: bytes) -> list[str]:
    texts = [window.decode("utf-8", "replace")]
    if b"\x00" in window:
        texts.append(window.replace(b"\x00", b"").decode("utf-8", "replace"))
    return [kind for text in texts for kind in find_secrets(text)]


def _resolve_journal_conflicts(repo: Repo, conflicted: list[str], report: SyncReport) -> list[str]:
    """Merge conflicted journal notes by union (stages 1/2/3); return the conflicts that remain."""
    from vault_kg.notes.vault_write import read_current, write_note

    remaining = []
    for top_rel in conflicted:
        rel = repo.vault_rel(top_rel)
        if rel is None or not fnmatch.fnmatch(rel, JOURNAL_PATTERN) or "/" in rel[len("journal/") :]:
            remaining.append(top_rel)
            continue
        stages = []
        for stage in (1, 2, 3):
            proc = repo.git("show", f":{stage}:{top_rel}", check=False)
            stages.append(proc.stdout if proc.returncode == 0 else "")
        if not stages[1] and not stages[2]:
            remaining.append(top_rel)
            continue
        try:  # the tags are both sides' own (a day note carries scope/global): no promotion happens here
            before = read_current(repo.vault, rel)
            write_note(repo.vault, rel, merge_day(*stages, name=rel), based_on=before, create=before is None, contract=False, promotion=True)
        except KgError:
            remaining.append(top_rel)
            continue
        repo.git("add", "--", top_rel)
        report.journal_merged.append(rel)
    return remaining


def _pull(repo: Repo, report: SyncReport) -> None:
    """`git pull --rebase`, settling journal conflicts; stop (rebase left in progress) on any other.

    An editor that saved a note after the commit leaves the tree dirty, and git refuses to rebase
    it: that edit is committed too and the pull tried again (`EDITED_RETRIES` times)."""
    for _ in range(EDITED_RETRIES):
        proc = repo.git("pull", "--rebase", "--no-autostash", "-q", check=False)
        if proc.returncode == 0 or operation_in_progress(repo) or not any(why in proc.stderr for why in _EDITED_MEANWHILE):
            break
        _commit_pending(repo, report)
    steps = 0
    while proc.returncode != 0:
        if operation_in_progress(repo) != "rebase":
            raise KgError(f"{repo.vault}: `git pull --rebase` failed: {last_line(proc)}; fix that and run kg sync again")
        conflicted = unmerged_paths(repo)
        remaining = _resolve_journal_conflicts(repo, conflicted, report)
        if remaining or not conflicted or steps > MAX_REBASE_STEPS:
            _stop_on_conflict(repo, remaining or conflicted, report)
        steps += 1
        proc = repo.git("rebase", "--continue", check=False)


def _stop_on_conflict(repo: Repo, files: list[str], report: SyncReport) -> None:
    vault = shlex.quote(str(repo.vault))
    names = " ".join(shlex.quote(f) for f in files)
    report.conflicts = list(files)
    report.continue_command = f"git -C {vault} add {names} && git -C {vault} -c core.editor=true rebase --continue && kg sync --vault {vault}"
    report.abort_command = f"git -C {vault} rebase --abort"
    raise SyncConflict(
        f"{repo.vault}: sync stopped: conflict in {', '.join(files)} (both machines changed the same lines; "
        f"nothing was lost: both versions are in the file between <<<<<<< and >>>>>>> markers). "
        f"Edit the file(s) to keep what you want, then run: {report.continue_command}   "
        f"(or go back with: {report.abort_command})",
        report,
    )


def _changed_between(repo: Repo, old: str | None, new: str | None) -> list[str]:
    if not old or not new or old == new:
        return []
    out = repo.git("diff", "--name-only", "-z", "--no-renames", old, new, "--", ".").stdout
    return sorted(rel for rel in (repo.vault_rel(p) for p in z_split(out)) if rel is not None)


def _push(repo: Repo, report: SyncReport, branch: str, upstream: str) -> None:
    if upstream:
        ahead = int(repo.git("rev-list", "--count", "@{u}..HEAD").stdout.strip() or 0)
        if not ahead:
            return
        proc = repo.git("push", "-q", check=False)
    else:
        remote = _default_remote(repo)
        if remote is None:
            report.notices.append("no git remote: committed here only; add one with `git remote add origin URL` and sync again")
            return
        proc = repo.git("push", "-q", "-u", remote, branch, check=False)
        report.upstream = f"{remote}/{branch}"
    if proc.returncode != 0:
        raise KgError(f"{repo.vault}: push failed: {last_line(proc)}; your notes are committed here; run kg sync again")
    report.pushed = True


def _default_remote(repo: Repo) -> str | None:
    remotes = repo.git("remote").stdout.split()
    if not remotes:
        return None
    return "origin" if "origin" in remotes else remotes[0]


def _adopt_remote_branch(repo: Repo, branch: str) -> str:
    """With no upstream set: track `<remote>/<branch>` if the remote has it (first sync of a clone)."""
    remote = _default_remote(repo)
    if remote is None:
        return ""
    repo.git("fetch", "-q", remote, check=False)
    if repo.git("rev-parse", "--verify", "-q", f"refs/remotes/{remote}/{branch}", check=False).returncode != 0:
        return ""
    repo.git("branch", "-q", f"--set-upstream-to={remote}/{branch}", branch)
    return f"{remote}/{branch}"


def sync(vault: Path, init: bool = False, update_graph: bool = True) -> SyncReport:
    """Commit local note changes, pull --rebase, push, then update this machine's graph."""
    from vault_kg.core.safe_write import locked
    from vault_kg.core.scopes import vault_scope

    vault = vault.resolve()
    repo, notices = setup(vault, init)
    report = SyncReport(str(vault), notices=notices)
    busy = operation_in_progress(repo)
    if busy:
        conflicts = unmerged_paths(repo)
        hint = f"resolve {', '.join(conflicts)} then `git -C '{vault}' add FILES && git -C '{vault}' {busy} --continue`" if conflicts else f"finish it with `git -C '{vault}' {busy} --continue`"
        raise KgError(f"{vault}: a git {busy} is in progress: {hint}, or `git -C '{vault}' {busy} --abort`; then kg sync")
    report.branch = _branch(repo)
    with locked(vault, None):  # kg's own writers wait while git commits and rewrites files (`pull --rebase`)
        _commit_pending(repo, report)
        report.upstream = _upstream(repo) or _adopt_remote_branch(repo, report.branch)
        before = head(repo)
        if report.upstream:
            _pull(repo, report)
        after = head(repo)
    report.pulled_files = _changed_between(repo, before, after)
    _push(repo, report, report.branch, report.upstream)
    if update_graph:
        report.update = _update_graph(repo, vault_scope(vault))
    return report


def _update_graph(repo: Repo, scope: Any) -> dict[str, Any]:
    """Bring this machine's graph up to the new HEAD through the one engine route.

    `kg-out/sync-state.json` (per machine, never synced) remembers the commit the graph was last
    updated for; the notes changed since then (pulled, committed here, or resolved by hand after
    a conflict) are the ones re-extracted. Without that record: a full (still incremental) run.
    """
    from vault_kg.storage.layout import Layout
    from vault_kg.jobs.scope_update import update_scope

    state_path = Layout(scope.out).sync_state
    now = head(repo)
    seen: str | None = None
    try:
        seen = json.loads(state_path.read_text(encoding="utf-8")).get("head")
    except (OSError, ValueError, AttributeError):
        seen = None
    known = bool(seen) and repo.git("cat-file", "-e", f"{seen}^{{commit}}", check=False).returncode == 0
    if not known or not Layout(scope.out).cache_db.exists():
        outcome = update_scope(scope)
    else:
        notes = [rel for rel in _changed_between(repo, seen, now) if _is_note(rel)]
        outcome = update_scope(scope, [scope.root / rel for rel in notes]) if notes else None
    result = outcome.as_dict() if outcome is not None else {"scope": scope.name, "extracted": [], "removed": []}
    if now:
        atomic_write(state_path, json.dumps({"head": now}).encode("utf-8"))
    return result


def status(vault: Path, fetch: bool = True) -> SyncStatus:
    """Ahead/behind the upstream (after a fetch when reachable) and the notes not yet committed."""
    vault = vault.resolve()
    repo = open_repo(vault)
    notices: list[str] = []
    branch = _branch_name(repo)
    upstream = _upstream(repo, branch)
    fetched = False
    if fetch and upstream:
        remote = upstream.split("/", 1)[0]
        proc = repo.git("fetch", "-q", remote, check=False)
        fetched = proc.returncode == 0
        if not fetched:
            notices.append(f"could not reach {remote} ({last_line(proc)}); counts are as of the last fetch")
    ahead = behind = 0
    if upstream:
        counts = repo.git("rev-list", "--left-right", "--count", f"refs/heads/{branch}...{upstream}").stdout.split()
        ahead, behind = int(counts[0]), int(counts[1])
    elif branch != "(detached)":
        notices.append("no upstream branch: the first `kg sync` pushes this branch to the remote")
    verbs = {"?": "new", "A": "added", "M": "modified", "D": "deleted", "R": "renamed", "U": "conflict"}
    uncommitted = []
    for code, rel in status_entries(repo):
        letter = next((c for c in code if c.strip()), "?")
        uncommitted.append({"path": display_name(rel), "change": "conflict" if "U" in code or code in ("AA", "DD") else verbs.get(letter, "changed")})
    in_progress = operation_in_progress(repo)
    return SyncStatus(str(vault), branch, upstream, ahead, behind, uncommitted, in_progress, unmerged_paths(repo), fetched, notices)


def format_report(report: dict[str, Any]) -> str:
    lines = list(report.get("notices", []))
    if report.get("committed"):
        lines.append(f"committed {len(report['committed_files'])} file(s) as {report['committed'][:10]}")
    for rel in report.get("journal_merged", []):
        lines.append(f"merged journal entries of both machines in {rel}")
    lines.append(f"pulled {len(report.get('pulled_files', []))} changed file(s)" + (f" from {report['upstream']}" if report.get("upstream") else ""))
    lines.append("pushed" if report.get("pushed") else "nothing to push")
    update = report.get("update")
    if update is not None:
        lines.append(f"graph updated: {len(update.get('extracted', []))} extracted · {len(update.get('removed', []))} removed")
    return "\n".join(lines)


def format_status(data: dict[str, Any]) -> str:
    lines = list(data.get("notices", []))
    track = f" → {data['upstream']}" if data.get("upstream") else " (no upstream)"
    lines.append(f"{data['branch']}{track}: {data['ahead']} ahead · {data['behind']} behind")
    if data.get("in_progress"):
        lines.append(f"a git {data['in_progress']} is in progress; conflicts: {', '.join(data['conflicts']) or 'none'}")
    for item in data["uncommitted"]:
        lines.append(f"  {item['change']:<9} {item['path']}")
    lines.append(f"{len(data['uncommitted'])} uncommitted file(s)")
    return "\n".join(lines)
