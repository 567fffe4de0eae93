"""Date expressions in a recall question, resolved to a range of days in the user's time zone.

memsearch knows nothing about dates, so recall turns "what did I do last week on payments" into
a range (the days whose journal files are searched) plus the rest of the question ("payments").
Weeks start on Monday (ISO). ``now`` is injectable so tests pin the clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from vault_kg.core.errors import KgError

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fourteen": 14, "fifteen": 15,
    "twenty": 20, "thirty": 30,
}  # fmt: skip


@dataclass(frozen=True)
class DateRange:
    """Inclusive range of days, with the words of the question that named it.

    ``window`` narrows it to a span of wall-clock time in the user's zone ("this morning",
    "an hour ago"): entries outside it are left out even on the range's days.
    """

    start: date
    end: date
    phrase: str
    window: tuple[datetime, datetime] | None = None

    def holds(self, day: date, hhmm: str) -> bool:
        """Whether an entry stamped ``hhmm`` on ``day`` falls in the range (and its window)."""
        if day not in self:
            return False
        if self.window is None:
            return True
        hours, minutes = hhmm.split(":")
        moment = datetime(day.year, day.month, day.day, int(hours), int(minutes))
        return self.window[0] <= moment <= self.window[1]

    def days(self) -> list[date]:
        return [self.start + timedelta(days=i) for i in range((self.end - self.start).days + 1)]

    def __contains__(self, day: object) -> bool:
        return isinstance(day, date) and self.start <= day <= self.end


@dataclass(frozen=True)
class Resolved:
    """A question split into its date range (None: no date named) and the remaining words."""

    range: DateRange | None
    rest: str


def resolve_timezone(name: str = "") -> tzinfo:
    """The IANA zone ``name``, or the system's local zone when empty."""
    if not name:
        local = datetime.now().astimezone().tzinfo
        assert local is not None
        return local
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise KgError(f"unknown time zone {name!r} in the config file; use an IANA name like 'Europe/Paris'") from exc


def today_in(tz: tzinfo, now: datetime | None = None) -> date:
    """Today's date in ``tz`` (``now`` may be naive, read as already in ``tz``)."""
    if now is None:
        return datetime.now(tz).date()
    if now.tzinfo is None:
        return now.date()
    return now.astimezone(tz).date()


def _week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _month_range(year: int, month: int) -> tuple[date, date]:
    start = date(year, month, 1)
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    return start, nxt - timedelta(days=1)


def _previous_weekday(today: date, weekday: int) -> date:
    """The most recent ``weekday`` strictly before ``today``."""
    delta = (today.weekday() - weekday) % 7 or 7
    return today - timedelta(days=delta)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


_NUM = r"(\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")"
_WD = "(" + "|".join(WEEKDAYS) + r")s?"
_MON = "(" + "|".join(m for m in MONTHS) + "|" + "|".join(m[:3] for m in MONTHS) + r")\.?"
_ISO = r"(\d{4})-(\d{2})-(\d{2})"


PARTS_OF_DAY = {  # (first hour, last hour) of the part of the day, inclusive
    "this morning": (0, 11),
    "this afternoon": (12, 17),
    "this evening": (17, 23),
    "tonight": (17, 23),
    "last night": (17, 23),
}


def _window(text: str, moment: datetime) -> tuple[datetime, datetime] | None:
    """The wall-clock span a part of the day or "N hours ago" names (naive, in the user's zone)."""
    text = text.strip()
    if text in PARTS_OF_DAY:
        first, last = PARTS_OF_DAY[text]
        day = moment.date() - timedelta(days=text == "last night")
        start = datetime(day.year, day.month, day.day, first)
        return start, start.replace(hour=last, minute=59)
    if m := re.fullmatch(_NUM + r" hours? ago", text):
        around = moment - timedelta(hours=_count(m.group(1)))
        return around - timedelta(hours=1), min(moment, around + timedelta(hours=1))
    return None


def _point(text: str, today: date) -> tuple[date, date] | None:
    """A single named day or period ("monday", "last week", "2025-03-14") as (start, end)."""
    text = text.strip()
    if text in ("today", "tonight", "this morning", "this afternoon", "this evening"):
        return today, today
    if text in ("yesterday", "last night"):
        day = today - timedelta(days=1)
        return day, day
    if text == "the day before yesterday":
        day = today - timedelta(days=2)
        return day, day
    if m := re.fullmatch(_NUM + r" (day|week|month)s? ago", text):
        n, unit = _count(m.group(1)), m.group(2)
        if unit == "day":
            day = today - timedelta(days=n)
            return day, day
        if unit == "week":
            start = _week_start(today) - timedelta(weeks=n)
            return start, start + timedelta(days=6)
        year, month = divmod(today.year * 12 + today.month - 1 - n, 12)
        return _month_range(year, month + 1)
    if text == "this week":
        return _week_start(today), today
    if text == "last week":
        start = _week_start(today) - timedelta(weeks=1)
        return start, start + timedelta(days=6)
    if text in ("this weekend", "last weekend"):
        saturday = _week_start(today) + timedelta(days=5)
        if text == "last weekend" or saturday > today:
            saturday -= timedelta(weeks=1)
        return saturday, saturday + timedelta(days=1)
    if text == "this month":
        return date(today.year, today.month, 1), today
    if text == "last month":
        first = date(today.year, today.month, 1) - timedelta(days=1)
        return _month_range(first.year, first.month)
    if text == "this year":
        return date(today.year, 1, 1), today
    if text == "last year":
        return date(today.year - 1, 1, 1), date(today.year - 1, 12, 31)
    if m := re.fullmatch(r"(?:(last|this|on) )?" + _WD, text):
        weekday = WEEKDAYS.index(m.group(2))
        if m.group(1) == "this":
            day = _week_start(today) + timedelta(days=weekday)
        else:
            day = _previous_weekday(today, weekday)
        return day, day
    if m := re.fullmatch(_ISO, text):
        try:
            day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return None
        return day, day
    if m := re.fullmatch(_MON + r" (\d{1,2})(?:st|nd|rd|th)?(?:,? (\d{4}))?", text) or re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)? " + _MON + r"(?:,? (\d{4}))?", text):
        groups = m.groups()
        month_word, day_num = (groups[0], groups[1]) if not groups[0].isdigit() else (groups[1], groups[0])
        return _month_day(month_word, int(day_num), groups[2], today)
    if m := re.fullmatch(_MON + r"(?: (\d{4}))?", text):
        if m.group(1) == "may" and not m.group(2):
            return None  # "may" alone is far more often the verb than the month
        month = _month_number(m.group(1))
        year = int(m.group(2)) if m.group(2) else today.year - (month > today.month)
        return _month_range(year, month)
    return None


def _month_number(word: str) -> int:
    word = word.rstrip(".")
    return next(i + 1 for i, name in enumerate(MONTHS) if name.startswith(word))


def _month_day(month_word: str, day_num: int, year_word: str | None, today: date) -> tuple[date, date] | None:
    month = _month_number(month_word)
    year = int(year_word) if year_word else today.year
    try:
        day = date(year, month, day_num)
        if not year_word and day > today:
            day = date(year - 1, month, day_num)
    except ValueError:
        return None
    return day, day


_POINT_WORDS = (
    r"the day before yesterday|today|tonight|yesterday|last night|this (?:morning|afternoon|evening)"
    rf"|{_NUM} (?:hour|day|week|month)s? ago|(?:this|last) (?:week|weekend|month|year)"
    rf"|(?:(?:last|this|on) )?{_WD}|{_ISO}|{_MON} \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)? {_MON}(?:,? \d{{4}})?|{_MON}(?: \d{{4}})?"
)
_POINT_RE = re.compile(rf"\b(?:{_POINT_WORDS})\b")
_PAST_N_RE = re.compile(rf"\b(?:in )?the (?:last|past) {_NUM} (day|week|month)s?\b|\b(?:last|past) {_NUM} (day|week|month)s\b")
_BETWEEN_RE = re.compile(rf"\b(?:between|from) (?P<a>{_POINT_WORDS}) (?:and|to|until) (?P<b>{_POINT_WORDS})\b")
_SINCE_RE = re.compile(rf"\b(?:since|after) (?P<a>{_POINT_WORDS})\b")
_CONNECTORS = re.compile(r"\b(?:on|in|during|of|for|at)\s*$")


def _strip_span(text: str, start: int, end: int) -> str:
    before = _CONNECTORS.sub("", text[:start])
    return re.sub(r"\s+", " ", f"{before} {text[end:]}").strip(" ,?.!")


def resolve(question: str, *, now: datetime | None = None, tz: tzinfo | None = None) -> Resolved:
    """Split ``question`` into the date range it names (the first one) and the other words."""
    tz = tz or resolve_timezone()
    today = today_in(tz, now)
    moment = (now.astimezone(tz) if now.tzinfo is not None else now) if now is not None else datetime.now(tz)
    moment = moment.replace(tzinfo=None)
    text = re.sub(r"\s+", " ", question.lower()).strip()

    if m := _BETWEEN_RE.search(text):
        first, second = _point(m.group("a"), today), _point(m.group("b"), today)
        if first and second:
            start, end = min(first[0], second[0]), max(first[1], second[1])
            return Resolved(DateRange(start, end, m.group(0)), _strip_span(text, *m.span()))
    if m := _SINCE_RE.search(text):
        point = _point(m.group("a"), today)
        if point:
            return Resolved(DateRange(point[0], today, m.group(0)), _strip_span(text, *m.span()))
    if m := _PAST_N_RE.search(text):
        n_word = m.group(1) or m.group(3)
        unit = m.group(2) or m.group(4)
        days = _count(n_word) * {"day": 1, "week": 7, "month": 30}[unit]
        start = today - timedelta(days=max(days - 1, 0))
        return Resolved(DateRange(start, today, m.group(0)), _strip_span(text, *m.span()))
    for m in _POINT_RE.finditer(text):
        window = _window(m.group(0), moment)
        point = (window[0].date(), window[1].date()) if window else _point(m.group(0), today)
        if point:
            return Resolved(DateRange(point[0], point[1], m.group(0), window), _strip_span(text, *m.span()))
    return Resolved(None, text.strip(" ?.!"))
