"""Secret redaction: nothing that looks like a credential reaches the vault or an artifact.

The one redaction: everything kg writes from free text (journal entries, transcript summaries,
note bodies written by agents) and everything it stores or sends besides (the recall log, the
hooks' and jobs' logs, prompts to the model, commit messages) passes through :func:`redact` first. Patterns are specific on purpose: a false positive
costs a few characters of a note, a false negative leaks a key into a synced vault.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["PLACEHOLDER", "RedactedStream", "find_secrets", "may_hold_secret", "redact", "redact_data", "redact_output", "trigger_starts"]

PLACEHOLDER = "[REDACTED:{kind}]"


@dataclass(frozen=True)
class _Rule:
    kind: str
    regex: str
    flags: int = 0
    group: int = 0  # the group that holds the secret itself (0: the whole match)
    hints: tuple[str, ...] = ()  # lowercase substrings every match contains (empty: always run)
    needs: tuple[str, ...] = ()  # case-sensitive substrings of the text, one of which every match contains

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        """Compiled the first time some text holds the rule's hints: a process that only reads
        clean text (a hook re-reading one note) never compiles it."""
        return re.compile(self.regex, self.flags)


def _rule(kind: str, regex: str, group: int = 0, flags: int = 0, needs: tuple[str, ...] = ()) -> _Rule:
    return _Rule(kind, regex, flags, group, _HINTS.get(kind, ()), needs)


# The `NAME=value` rules match case-sensitively: an upper- or a lowercase key word must be there.
_UPPER_KEYS = ("SECRET", "TOKEN", "PASS", "KEY", "CREDENTIAL")
_LOWER_KEYS = ("pass", "secret", "key", "token")


# A substring test is far cheaper than a regex led by `\b`; rules whose hints are absent are skipped.
_HINTS: dict[str, tuple[str, ...]] = {
    "private-key": ("-----begin",),
    "jwt": ("eyj",),
    "aws-access-key": ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa"),
    "aws-secret-key": ("secret",),
    "gcp-api-key": ("aiza",),
    "gcp-oauth-token": ("ya29.",),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-token": ("glpat-", "gldt-", "glptt-", "glrt-"),
    "slack-token": ("xox",),
    "slack-webhook": ("hooks.slack.com",),
    "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",),
    "stripe-key": ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
    "url-password": ("://",),
    "bearer-token": ("authorization",),
    "npm-token": ("npm_",),
    "huggingface-token": ("hf_",),
    "azure-storage-key": ("accountkey=",),
    "sendgrid-key": ("sg.",),
}


_NOT_REDACTED = r"(?!\[REDACTED)"
# A value, unless it is empty, already redacted, or a placeholder (`${VAR}`, `<your-key>`).
_ENV_VALUE = _NOT_REDACTED + r"[\"']?[^\s\"'$<{](?:[^\n]*[^\s])?"

# Order matters: the first rule to claim a span wins, so the most specific rules come first.
_RULES: tuple[_Rule, ...] = (
    _rule(
        "private-key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
        flags=re.DOTALL,
    ),
    _rule("jwt", r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}"),
    _rule("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
    _rule(
        "aws-secret-key",
        r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})\b",
        group=1,
    ),
    _rule("gcp-api-key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    _rule("gcp-oauth-token", r"\bya29\.[0-9A-Za-z_-]{20,}"),
    _rule("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b"),
    _rule("gitlab-token", r"\bgl(?:pat|dt|ptt|rt)-[A-Za-z0-9_-]{20,}"),
    _rule("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    _rule("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),
    _rule("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    _rule("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    _rule("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    _rule("huggingface-token", r"\b(?:hf|api_org)_[A-Za-z0-9]{34}\b"),
    _rule("azure-storage-key", r"(?i)\bAccountKey=([A-Za-z0-9+/]{86}==)", group=1),
    _rule("sendgrid-key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b", needs=("SG.",)),
    _rule("url-password", r"\b[a-z][a-z0-9+.-]{0,31}+://[^\s:/@]++:(" + _NOT_REDACTED + r"[^\s@/]++)@", group=1),
    _rule(
        "bearer-token",
        r"(?i)\bauthorization\s*:\s*(?:bearer|token|basic)\s+(" + _NOT_REDACTED + r"[A-Za-z0-9._~+/=-]{8,})",
        group=1,
    ),
    _rule(
        "env-secret",
        r"(?m)^[ \t]*+(?:export[ \t]+)?"
        r"(?=[A-Z0-9_]*?(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH))"
        r"[A-Z0-9_]++[ \t]*+[=:][ \t]*+(" + _ENV_VALUE + r")[ \t]*$",
        group=1,
        needs=(*_UPPER_KEYS, "AUTH"),
    ),
    _rule(
        "env-secret",  # the same, pasted mid-line: `… key DATABASE_PASSWORD=hunter2 …` (uppercase names only)
        r"(?<![A-Za-z0-9_])(?=[A-Z0-9_]*?(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?))"
        r"[A-Z0-9_]++=(" + _NOT_REDACTED + r"[^\s\"'$<{][^\s\"']{5,}+)",
        group=1,
        needs=_UPPER_KEYS,
    ),
    _rule(
        "env-secret",
        r"(?m)^[ \t]*+"
        r"(?=[a-z0-9_.-]*?(?:password|passwd|passphrase|secret|api_?key|access_?token|auth_?token|private_?key|client_secret))"
        r"[a-z0-9_.-]++[\"']?[ \t]*+[=:][ \t]*+(" + _ENV_VALUE + r")[ \t]*,?$",
        group=1,
        needs=_LOWER_KEYS,
    ),
    _rule(
        "json-secret",  # `"password": "hunter2"` anywhere on a line (JSON, YAML flow maps, Python dicts)
        r"(?i)[\"'](?=[a-z0-9_.-]{0,40}?(?:password|passwd|passphrase|secret|api_?key|access_?key|access_?token|auth_?token|private_?key|token[\"']))"
        r"[a-z0-9_.-]{1,64}+[\"'][ \t]*+:[ \t]*+[\"'](" + _NOT_REDACTED + r"[^\s\"'$<{][^\"'\n]{2,}+)[\"']",
        group=1,
    ),
    _rule(
        "password-arg",  # `--password=hunter2`, `mysql -p… password=hunter2`, `?token=…&`, in any case, mid-line
        r"(?i)(?<![A-Za-z0-9_])(?:--?)?(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|client[_-]?secret)"
        r"=(" + _NOT_REDACTED + r"[^\s\"'$<{&][^\s\"'&]{3,}+)",
        group=1,
    ),
)


# Values of the `NAME=value` rules that only show where a secret goes: a prefix cut short
# (`rk_live_...`, `sk-…`), a run of x, * or dots, `<your key>`, `{{ token }}`, `changeme`.
_VALUE_RULES = frozenset({"env-secret", "aws-secret-key", "json-secret", "password-arg"})
_PLACEHOLDER_RE = re.compile(r"[\"']?(?:[\w-]{0,12}+(?:\.{3,}+|…)|[xX*.•]{3,}+|<[^<>\n]{0,80}+>|\{\{[^{}\n]{0,80}+\}\}|changeme|placeholder|your[-_][\w-]{0,40}+)[\"']?")


# Every rule's match contains one of these: one cheap search skips the rules for clean text,
# which is nearly all of it (redaction runs on every string a graph extracts). `auth` and `token`
# count only where a rule needs them (`Authorization:`, `access_token`, `auth_token`, or the
# uppercase `AUTH`/`TOKEN` of the case-sensitive `NAME=value` rules): as plain words they are in
# most notes about software, and each hit sent a string through every rule.
_TRIGGER = re.compile(
    r"-----BEGIN|eyJ|A[KS]IA|ABIA|ACCA|AGPA|AIDA|AROA|AIza|ya29\.|gh[pousr]_|github_pat_|gl(?:pat|dt|ptt|rt)-|xox[abposr]-"
    r"|sk-|[sr]k_(?:live|test)_|://|authorization|access_?token|auth_?token|secret|passw|passphrase|api_?key|access_?key"
    r"|private_?key|credential|npm_|hf_|api_org_|accountkey=|token=|api-key|access-key|client-secret|[\"']token[\"']|(?-i:AUTH|TOKEN|SG\.)",
    re.IGNORECASE,
)
# `_TRIGGER` spelled out, lowercase, as a prefix tree: on lowercased ASCII text (where lowering
# matches exactly what IGNORECASE matches) it runs about ten times faster; other text takes
# `_TRIGGER`. The case-sensitive words (`_TRIGGER_CASED`) are looked for in the text as it is.
_TRIGGER_WORDS = (
    "-----begin", "eyj", "akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "aiza", "ya29.",
    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glptt-", "glrt-",
    "xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "sk-", "sk_live_", "sk_test_", "rk_live_", "rk_test_",
    "://", "authorization", "access_token", "accesstoken", "auth_token", "authtoken", "secret", "passw", "passphrase",
    "api_key", "apikey", "access_key", "accesskey", "private_key", "privatekey", "credential",
    "npm_", "hf_", "api_org_", "accountkey=", "token=", "api-key", "access-key", "client-secret", '"token"', "'token'",
)  # fmt: skip
_TRIGGER_CASED = ("AUTH", "TOKEN", "SG.")


def _prefix_tree(words: list[str]) -> str:
    """An alternation of `words` factored by first character (`re` tries one branch per position)."""
    if "" in words:
        return ""  # a word that ends here: any continuation also contains it
    heads: dict[str, list[str]] = {}
    for word in words:
        heads.setdefault(word[0], []).append(word[1:])
    parts = []
    for head, tails in sorted(heads.items()):
        rest = _prefix_tree(tails)
        parts.append(re.escape(head) + (f"(?:{rest})" if "|" in rest else rest))
    return "|".join(parts)


_TRIGGER_LOWER = re.compile(_prefix_tree(list(_TRIGGER_WORDS)))
_TRIGGER_AS_IS = re.compile("|".join(_TRIGGER_CASED))


def may_hold_secret(text: str) -> bool:
    """False when no rule can match anywhere in `text`."""
    if text.isascii():
        return _TRIGGER_LOWER.search(text.lower()) is not None or any(word in text for word in _TRIGGER_CASED)
    return _TRIGGER.search(text) is not None


def trigger_starts(text: str) -> list[int]:
    """Where the words that every secret contains start in `text` (not overlapping within each
    of the two searches of ASCII text, in no particular order).

    A string with a hit holds one of them whole, and none crosses a NUL, a quote or a `repr`
    escape: one call over many strings' `repr`s joined by NULs tells which of them may hold a
    secret (those holding a position), and the others are clean."""
    if text.isascii():
        starts = [match.start() for match in _TRIGGER_LOWER.finditer(text.lower())]
        return starts + [match.start() for match in _TRIGGER_AS_IS.finditer(text)]
    return [match.start() for match in _TRIGGER.finditer(text)]


def _spans(text: str) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, kind) secret spans, in text order."""
    if not may_hold_secret(text):
        return []
    lowered = text.lower()
    taken: list[tuple[int, int, str]] = []
    for rule in _RULES:
        if rule.hints and not _contains_any(lowered, rule.hints):
            continue
        if rule.needs and not _contains_any(text, rule.needs):
            continue
        for match in rule.pattern.finditer(text):
            start, end = match.span(rule.group)
            if start == end or any(start < t_end and t_start < end for t_start, t_end, _ in taken):
                continue
            if rule.kind in _VALUE_RULES and _PLACEHOLDER_RE.fullmatch(text, start, end):
                continue
            taken.append((start, end, rule.kind))
    return sorted(taken)


def _contains_any(text: str, words: tuple[str, ...]) -> bool:
    for word in words:
        if word in text:
            return True
    return False


def find_secrets(text: str) -> list[str]:
    """The kind of every secret found, one per occurrence, in text order (empty: clean)."""
    return [kind for _, _, kind in _spans(text)]


def redact(text: str, keep_lines: bool = False) -> str:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``; idempotent.

    With ``keep_lines``, a secret spanning lines (a private key) leaves its line breaks behind, so
    every later line keeps its number (journal entries are cited by `file:line`).
    """
    if len(text) <= _SHORT and not keep_lines:
        return _redact_short(text)
    return _redact(text, keep_lines)


# Graphs repeat their short strings (a tag, a heading, a link target in note after note).
_SHORT = 200


@functools.lru_cache(maxsize=8192)
def _redact_short(text: str) -> str:
    return _redact(text, False)


def _redact(text: str, keep_lines: bool) -> str:
    spans = _spans(text)
    if not spans:
        return text
    out: list[str] = []
    cursor = 0
    for start, end, kind in spans:
        out.append(text[cursor:start])
        out.append(PLACEHOLDER.format(kind=kind))
        if keep_lines:
            out.append("\n" * text.count("\n", start, end))
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def redact_data(value: Any) -> Any:
    """`value` with every string in it (through dicts, lists and tuples) redacted; the rest as is.

    Strings under 8 characters are skipped: no secret shape is that short, and graphs hold many.
    """
    if isinstance(value, str):
        return redact(value) if len(value) >= 8 else value
    if isinstance(value, dict):
        return {key: redact_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_data(item) for item in value]
    if isinstance(value, tuple):
        return tuple(redact_data(item) for item in value)
    return value


class RedactedStream:
    """A text stream that redacts what it writes, a line at a time (a job's log: its own lines,
    warnings and tracebacks, which can quote a note)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        if "\n" in self.pending:
            done, _, self.pending = self.pending.rpartition("\n")
            self.stream.write(redact(done + "\n"))
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.stream.write(redact(self.pending))
            self.pending = ""
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def redact_output() -> None:
    """Redact everything this process prints from now on (the detached jobs call it first: their
    output is their log under `kg-out/`)."""
    import sys

    if not isinstance(sys.stdout, RedactedStream):
        sys.stdout = RedactedStream(sys.stdout)
    if not isinstance(sys.stderr, RedactedStream):
        sys.stderr = RedactedStream(sys.stderr)
