"""Ollama's HTTP API, read within bounds whatever the server does.

The `ollama` client reads with one timeout per socket read and buffers each streamed line whole:
a server that sends a byte a second never times out, one that never ends a line fills memory
(1.2 GB in 8 s), and one line that is not JSON raises from deep inside the client. Every request
here has a deadline (a watchdog shuts the connection when it passes, so no read outlives it), a
cap on the bytes of its answer and on the length of a line, and names what went wrong: the
caller (`extract.llm`) keeps what it read before the bound, or fails the note with one line.
Requests and answers are Ollama's own (`/api/tags`, `/api/show`, `/api/chat` with NDJSON
streaming); the answers are parsed into the `ollama` package's types by the caller; HTTP errors
are `ollama.ResponseError`s as that client raises them.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import socket
import threading
import time
from typing import Any, Iterator
from urllib.parse import urlsplit

import httpx
import ollama

__all__ = ["AnswerTooLong", "BadLine", "DEFAULT_PORT", "MAX_ERROR_BYTES", "MAX_LINE_BYTES", "OllamaWire", "host_url"]

DEFAULT_PORT = 11434
MAX_LINE_BYTES = 256 * 1024  # one streamed line carries one token and its envelope: a few hundred bytes
MAX_ERROR_BYTES = 64 * 1024
_PIECE = 16 * 1024


class AnswerTooLong(Exception):
    """The answer passed its byte bound (a server that never stops, or a line that never ends)."""


class BadLine(ValueError):
    """A line of the answer that is not a JSON object (a proxy's page, a broken server)."""


def host_url(host: str) -> str:
    """The base URL of an Ollama host as `OLLAMA_HOST` writes it (`127.0.0.1`, `:11434`,
    `example.com:8080/path`, `https://example.com`), the way the `ollama` client reads it."""
    raw = (host or "").strip() or f"127.0.0.1:{DEFAULT_PORT}"
    scheme = raw.split("://", 1)[0] if "://" in raw else "http"
    parts = urlsplit(raw if "://" in raw else f"http://{raw}")
    port = parts.port or ({"http": 80, "https": 443}[scheme] if "://" in raw and scheme in ("http", "https") else DEFAULT_PORT)
    name = parts.hostname or "127.0.0.1"
    name = f"[{name}]" if ":" in name else name
    return f"{scheme}://{name}:{port}{parts.path.rstrip('/')}"


class OllamaWire:
    """One HTTP client for one Ollama host; every call takes the monotonic deadline it must end by."""

    def __init__(self, host: str, timeout: float, connect_timeout: float = 3.0) -> None:
        from vault_kg import __version__

        self.base_url = host_url(host)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"kg-vault/{__version__} ({platform.machine()} {platform.system().lower()}) Python/{platform.python_version()}",
        }
        if os.environ.get("OLLAMA_API_KEY"):
            headers["Authorization"] = f"Bearer {os.environ['OLLAMA_API_KEY']}"
        self.client = httpx.Client(base_url=self.base_url, headers=headers, follow_redirects=True)

    def get(self, path: str, deadline: float, max_bytes: int) -> Any:
        return self._whole("GET", path, None, deadline, max_bytes)

    def post(self, path: str, body: dict[str, Any], deadline: float, max_bytes: int) -> Any:
        return self._whole("POST", path, body, deadline, max_bytes)

    def _whole(self, method: str, path: str, body: dict[str, Any] | None, deadline: float, max_bytes: int) -> Any:
        with self._open(method, path, body, deadline) as (response, ends):
            data = b"".join(_bounded(response, deadline, ends, max_bytes))
        if time.monotonic() >= deadline:
            raise httpx.ReadTimeout(f"no complete answer within {self.timeout:g}s")
        try:
            return json.loads(data)
        except ValueError as exc:
            raise BadLine(f"the answer to {path} is not JSON") from exc

    def stream(self, path: str, body: dict[str, Any], deadline: float, max_bytes: int) -> Iterator[dict[str, Any]]:
        """Each JSON object of an NDJSON answer, as it arrives; ends quietly when `deadline` passes
        (the caller keeps what came before); raises `AnswerTooLong` past `max_bytes` or a line over
        `MAX_LINE_BYTES`, `BadLine` for a line that is not a JSON object, and
        `ollama.ResponseError` for an error object in the stream."""
        with self._open("POST", path, body, deadline) as (response, ends):
            pending = b""
            for piece in _bounded(response, deadline, ends, max_bytes):
                lines = (pending + piece).split(b"\n")
                pending = lines.pop()
                if len(pending) > MAX_LINE_BYTES:
                    raise AnswerTooLong(f"a line of the answer passed {MAX_LINE_BYTES // 1024} KB without ending")
                for line in lines:
                    if line.strip():
                        yield _object(line)
            if pending.strip() and time.monotonic() < deadline:
                yield _object(pending)

    @contextlib.contextmanager
    def _open(self, method: str, path: str, body: dict[str, Any] | None, deadline: float) -> Iterator[tuple[httpx.Response, float]]:
        """The response of a request that must end by `deadline` and within `timeout` (the moment it
        must end is yielded with it), with a watchdog that shuts its connection then; HTTP errors
        as `ollama.ResponseError`."""
        now = time.monotonic()
        ends = min(deadline, now + self.timeout)
        left = max(0.001, ends - now)
        timeout = httpx.Timeout(left, connect=min(self.connect_timeout, left))
        try:
            with self.client.stream(method, path, json=body, timeout=timeout) as response:
                watchdog = _watchdog(response, ends)
                try:
                    if response.status_code >= 400:
                        raise _response_error(response, ends)
                    yield response, ends
                finally:
                    watchdog.cancel()
        except httpx.ConnectError:
            raise ConnectionError(f"Failed to connect to Ollama at {self.base_url}") from None

    def close(self) -> None:
        self.client.close()


def _watchdog(response: httpx.Response, ends: float) -> threading.Timer:
    """Shut the response's socket at `ends`: a read blocked on a server that drips or stalls returns then."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None

    def cut() -> None:
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        else:  # pragma: no cover - a transport without a socket (HTTP/2, a mock)
            response.close()

    timer = threading.Timer(max(0.0, ends - time.monotonic()), cut)
    timer.daemon = True
    timer.start()
    return timer


def _bounded(response: httpx.Response, deadline: float, ends: float, max_bytes: int) -> Iterator[bytes]:
    """The body in pieces, until it ends, the note's `deadline` passes (ends quietly), the call's
    own end `ends` passes (`httpx.ReadTimeout`) or it passes `max_bytes` (`AnswerTooLong`)."""
    read = 0
    try:
        for piece in response.iter_bytes(_PIECE):
            read += len(piece)
            if read > max_bytes:
                raise AnswerTooLong(f"the answer passed {max_bytes // 1024} KB")
            yield piece
            if time.monotonic() >= min(deadline, ends):
                break
    except httpx.TransportError:
        if time.monotonic() < min(deadline, ends):
            raise
    if time.monotonic() >= ends and ends < deadline:
        raise httpx.ReadTimeout("the answer did not end in time")  # the watchdog, not the server, ended it


def _object(line: bytes) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise BadLine(f"a line of the answer is not a JSON object: {line[:60]!r}")
    if value.get("error"):
        raise ollama.ResponseError(str(value["error"]))
    return value


def _response_error(response: httpx.Response, ends: float) -> ollama.ResponseError:
    body = b"".join(_bounded(response, ends, ends, MAX_ERROR_BYTES))
    text = body.decode("utf-8", "replace")
    try:
        error = json.loads(text).get("error") or text
    except (ValueError, AttributeError):
        error = text
    return ollama.ResponseError(str(error), response.status_code)
