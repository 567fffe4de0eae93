"""Complete items of a streamed JSON answer, as they arrive, so a looping model can be cut short.

A small model that loops repeats an item until ``num_predict``; output tokens are what costs on a
CPU, so the reader stops at the first repeated item and keeps what came before. The answer's shape
is fixed by the schema: one object whose values are arrays of flat items (short arrays such as
``["Maria Chen", "works_on", "Acme"]``, or objects). :class:`ItemScanner` tracks strings and nesting
character by character and hands back each ``(array key, item)`` the moment its closing bracket
arrives; the text is never parsed twice.
"""

from __future__ import annotations

from typing import Any

import orjson


class ItemScanner:
    """Feed text pieces; get back the items completed by each piece."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.depth = 0
        self.in_string = False
        self.escaped = False
        self.string: list[str] = []
        self.last_string = ""
        self.key = ""
        self.item: list[str] | None = None
        self.closed = False
        self.bad_items = 0

    def feed(self, piece: str) -> list[tuple[str, Any]]:
        done: list[tuple[str, Any]] = []
        self.text.append(piece)
        for char in piece:
            if self.item is not None:
                self.item.append(char)
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
                    self.last_string = "".join(self.string)
                else:
                    self.string.append(char)
                continue
            if char == '"':
                self.in_string = True
                self.string = []
            elif char in "{[":
                self.depth += 1
                if char == "[" and self.depth == 2:
                    self.key = self.last_string
                elif self.depth == 3:
                    self.item = [char]
            elif char in "}]":
                self.depth -= 1
                if self.depth == 2 and self.item is not None:
                    done.extend(self._finish("".join(self.item)))
                    self.item = None
                elif self.depth == 0:
                    self.closed = True
        return done

    def _finish(self, raw: str) -> list[tuple[str, Any]]:
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.bad_items += 1
            return []
        if not isinstance(value, (dict, list)):
            self.bad_items += 1
            return []
        return [(self.key, value)]

    @property
    def content(self) -> str:
        return "".join(self.text)

    def whole(self) -> Any:
        """The whole answer parsed, when it is complete JSON; else None."""
        try:
            return orjson.loads(self.content)
        except orjson.JSONDecodeError:
            return None
