"""The doctor's report: one line per thing checked, a verdict each, and the fix where one is needed.

A verdict is `ok`, `warn` (works, but something is worth knowing: notes pending, a watcher not
running), `fail` (broken: the line names the command that repairs it) or `off` (not set up, and
nothing needs it to be). The report is broken, and `kg doctor` exits 1, when any line fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Line", "Report", "Verdict", "format_doctor"]

Verdict = Literal["ok", "warn", "fail", "off"]
MARKS = {"ok": "ok  ", "warn": "warn", "fail": "FAIL", "off": "off "}


@dataclass(frozen=True)
class Line:
    """One check: what it is about, its verdict, what was found, and the fix when it fails or warns."""

    check: str
    verdict: Verdict
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"check": self.check, "verdict": self.verdict, "detail": self.detail, "fix": self.fix}


@dataclass
class Report:
    lines: list[Line] = field(default_factory=list)

    def add(self, check: str, verdict: Verdict, detail: str, fix: str = "") -> None:
        self.lines.append(Line(check, verdict, detail, fix))

    @property
    def broken(self) -> bool:
        return any(line.verdict == "fail" for line in self.lines)

    def as_dict(self) -> dict[str, Any]:
        return {"broken": self.broken, "lines": [line.as_dict() for line in self.lines]}


def format_doctor(data: dict[str, Any]) -> str:
    """The report as text: `VERDICT check: detail`, and `-> fix` under the lines that need one."""
    width = max((len(line["check"]) for line in data["lines"]), default=0)
    out = []
    for line in data["lines"]:
        out.append(f"{MARKS[line['verdict']]}  {line['check']:<{width}}  {line['detail']}")
        if line["fix"]:
            out.append(f"      {'':<{width}}  -> {line['fix']}")
    broken = sum(line["verdict"] == "fail" for line in data["lines"])
    out.append(f"kg doctor: {broken} problem(s) to fix" if broken else "kg doctor: nothing broken")
    return "\n".join(out)
