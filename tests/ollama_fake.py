"""A loopback server that speaks the Ollama HTTP API, for tests of the real ``ollama`` client.

Test fixture only: the product never imports it. It follows Ollama's wire format and error shapes
(as documented and as ``shared/tools/ollama-compat`` reproduces them): ``/api/version``,
``/api/tags``, ``/api/show`` (``model_info``, ``details``), ``/api/chat`` streaming (NDJSON,
chunked) and not, ``done_reason``, token counts and durations, ``{"error": ...}`` bodies with
404/400/500/503, an error line mid-stream, a hang, and a dropped connection; and what no real
Ollama should do, for the client's bounds: a stream that drips (one byte every ``drip_s``), one
that never ends (a line that never closes), and a line that is not JSON.

Answers come from fixture files in ``tests/fixtures/llm/*.json``: ``{"match": "<text in the note>"``
(or a list of such markers, one per chunk of a long note),
``"answer": {...}}`` (or ``"content"`` for a raw string). Fixture items are objects with named
fields; like a model under a grammar, the server writes each one in the shape the request's
``format`` schema asks: an array in the order of the schema's ``prefixItems`` (named by their
``title``) when the items are arrays, fields it does not list left out. With ``"per_chunk": true`` only the items
whose names appear in the request's chunk are returned, each relation citing the chunk line that
names both ends, as a good model would. ``"loops_above_lines": N`` makes the model loop (repeat its
first relation until ``num_predict``) whenever the chunk has more than N lines; ``"runaway": true``
makes it write one endless string (nothing valid before ``num_predict``). Any other note gets an
empty answer. Faults are injected per test with :meth:`FakeOllama.inject`.

Like one local model, it can answer one chat at a time (``serial=True``), each after ``delay``
seconds: that makes lock and hook tests real. Every request is logged with its start and end time
(``log``, and as JSONL in ``log_path``), with the chats in flight (``max_inflight``) and the
streams the client closed early (``cancelled``). ``python tests/ollama_fake.py --delay 1`` runs it
as a process (the benches' stand-in).

Tokens are counted as ``ceil(chars / chars_per_token)``; a prompt over ``num_ctx`` is truncated the
way Ollama does (``prompt_eval_count`` reports about half the window), and output over
``num_predict`` is cut with ``done_reason: "length"``.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import socket
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures" / "llm"
DEFAULT_MODEL = "qwen2.5:7b-instruct"
DIGEST_A = "sha256:" + "a" * 64
DIGEST_B = "sha256:" + "b" * 64

FAULTS = {
    "404",
    "400",
    "500",
    "503",
    "hang",
    "midstream",
    "length",
    "badschema",
    "badjson",
    "drop",
    "drip",
    "endless",
    "nonjson",
}
_NOTE_LINE = re.compile(r"^(\d+): (.*)$", re.MULTILINE)


def closed_port_url() -> str:
    """A loopback URL on which nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class FakeOllama:
    """Start with ``with FakeOllama() as fake:``; point the client at ``fake.url``."""

    def __init__(
        self,
        fixtures_dir: Path = FIXTURES,
        models: dict[str, str] | None = None,
        *,
        delay: float = 0.0,
        serial: bool = False,
        log_path: Path | None = None,
        port: int = 0,
        echo: bool = False,
    ) -> None:
        self.fixtures = [json.loads(p.read_text()) for p in sorted(Path(fixtures_dir).glob("*.json"))]
        self.delay = delay
        self.serial = serial
        self.log_path = log_path
        self.port = port
        self.log: list[dict[str, Any]] = []
        self.inflight = 0
        self.max_inflight = 0
        self.cancelled = 0
        self._busy = threading.Lock()
        self._conns: set[socket.socket] = set()
        self.models: dict[str, str] = dict(models or {DEFAULT_MODEL: DIGEST_A})
        self.context_length = 32768
        self.chars_per_token = 4.0
        self.hang_s = 10.0
        self.drip_s = 0.2  # the "drip" fault: seconds between bytes
        self.sent_bytes = 0  # what the "endless" fault wrote before the client hung up
        self.piece_s = 0.001  # generation time per streamed piece of 16 characters
        self.echo = echo  # notes no fixture matches: their capitalized words as entities and relations
        self.faults: list[str] = []
        self.always: str | None = None
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # lifecycle -------------------------------------------------------------------------------
    def __enter__(self) -> FakeOllama:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        for conn in list(self._conns):  # a stopped server answers nothing, not even kept-alive clients
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # test controls ---------------------------------------------------------------------------
    def inject(self, fault: str, times: int = 1) -> None:
        """Make the next ``times`` chat requests fail with ``fault`` (see FAULTS)."""
        assert fault in FAULTS, fault
        with self._lock:
            self.faults.extend([fault] * times)

    @property
    def chat_calls(self) -> int:
        return len(self.requests)

    def settle(self, timeout: float = 10.0) -> None:
        """Wait until every request received so far has been answered (or abandoned) and logged."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and (self.inflight or len(self.log) < len(self.paths)):
            time.sleep(0.01)

    def requests_between(self, start: float, end: float) -> list[dict[str, Any]]:
        """Every request (any path) that was being served at some moment in [start, end]."""
        return [r for r in list(self.log) if r["t"] <= end and r.get("t_end", float("inf")) >= start]

    def record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.log.append(entry)
            if self.log_path is not None:
                with open(self.log_path, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps({k: v for k, v in entry.items() if k != "body"}) + "\n")

    def _next_fault(self) -> str | None:
        with self._lock:
            if self.faults:
                return self.faults.pop(0)
        return self.always

    def _resolve(self, name: str) -> str | None:
        def norm(n: str) -> str:
            n = n.casefold()
            return n if ":" in n else n + ":latest"

        return next((m for m in self.models if norm(m) == norm(name or "")), None)

    # the model -------------------------------------------------------------------------------
    def answer_for(self, user: str, fmt: Any = None) -> str:
        lines = {int(n): text for n, text in _NOTE_LINE.findall(user)}
        shape = _shaper(fmt)
        for fixture in self.fixtures:
            markers = fixture["match"] if isinstance(fixture["match"], list) else [fixture["match"]]
            if not any(marker in user for marker in markers):
                continue
            if fixture.get("runaway"):
                opening = json.dumps(shape("relations", {"line": 1, "source": "@", "relation": "uses", "target": "y"})).split("@")[0]
                return '{"relations": [' + opening + "Loopy " * 20000
            answer = fixture.get("answer")
            if fixture.get("per_chunk"):
                answer = self._per_chunk(answer, lines)
            limit = fixture.get("loops_above_lines")
            if limit is not None and len(lines) > limit:
                first = shape("relations", answer["relations"][0])
                return '{"relations": [' + ", ".join([json.dumps(first)] * 400)
            if "content" in fixture:
                return fixture["content"]
            return json.dumps({key: [shape(key, item) for item in items] for key, items in answer.items()})
        answer = self._echo(lines) if self.echo else {"relations": [], "entities": []}
        return json.dumps({key: [shape(key, item) for item in items] for key, items in answer.items()})

    @staticmethod
    def _echo(lines: dict[int, str]) -> dict[str, Any]:
        """A deterministic stand-in answer: each line's capitalized words are entities, and each
        one `uses` the next on the same line."""
        relations: list[dict[str, Any]] = []
        entities: dict[str, dict[str, Any]] = {}
        for number, text in sorted(lines.items()):
            names = list(dict.fromkeys(re.findall(r"\b[A-Z][A-Za-z]{2,}\b", text)))
            relations += [{"line": number, "source": a, "relation": "uses", "target": b} for a, b in zip(names, names[1:])]
            for name in names:
                entities.setdefault(name, {"name": name, "type": "concept"})
        return {"relations": relations[:12], "entities": list(entities.values())[:12]}

    @staticmethod
    def _per_chunk(answer: dict[str, Any], lines: dict[int, str]) -> dict[str, Any]:
        """The items this chunk names, each relation on the chunk line that names both ends."""
        folded = {n: text.casefold() for n, text in lines.items()}
        relations = []
        for rel in answer["relations"]:
            both = [n for n, text in sorted(folded.items()) if rel["source"].casefold() in text and rel["target"].casefold() in text]
            if both:
                relations.append({**rel, "line": both[0]})
        text = "\n".join(folded.values())
        entities = [e for e in answer["entities"] if e["name"].casefold() in text]
        return {"relations": relations, "entities": entities}

    def tokens(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)


def _shaper(fmt: Any) -> Any:
    """How the request's schema wants an item of each answer array written: a dict cut to the
    schema's fields, or an array in ``prefixItems`` order (the fixtures' items are dicts)."""
    props = fmt.get("properties", {}) if isinstance(fmt, dict) else {}

    def shape(key: str, item: dict[str, Any]) -> Any:
        items = (props.get(key) or {}).get("items") or {}
        if "prefixItems" in items:
            return [item.get(part.get("title")) for part in items["prefixItems"]]
        if "properties" in items:
            return {k: v for k, v in item.items() if k in items["properties"]}
        return item

    return shape


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOllama
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        return

    def setup(self) -> None:
        super().setup()
        self.fake._conns.add(self.connection)

    def finish(self) -> None:
        self.fake._conns.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def handle_one_request(self) -> None:
        entry: dict[str, Any] = {"t": time.time(), "path": ""}
        self._entry = entry
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            if entry["path"]:
                entry["t_end"] = time.time()
                self.fake.record(entry)

    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            self._error(400, "missing request body")
            return None
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            self._error(400, str(exc))
            return None

    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        fake = self.fake
        fake.paths.append(self.path)
        self._entry["path"] = self.path
        if self.path == "/api/version":
            self._json(200, {"version": "0.33.0"})
        elif self.path == "/api/tags":
            self._json(200, {"models": [self._tag(name, digest) for name, digest in fake.models.items()]})
        elif self.path == "/":
            data = b"Ollama is running"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self._error(404, "404 page not found")

    def _tag(self, name: str, digest: str) -> dict[str, Any]:
        return {
            "name": name,
            "model": name,
            "modified_at": "2026-01-01T00:00:00Z",
            "size": 4_683_087_332,
            "digest": digest.removeprefix("sha256:"),
            "details": self._details(),
        }

    @staticmethod
    def _details() -> dict[str, Any]:
        return {
            "parent_model": "",
            "format": "gguf",
            "family": "qwen2",
            "families": ["qwen2"],
            "parameter_size": "7.6B",
            "quantization_level": "Q4_K_M",
        }

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        fake = self.fake
        fake.paths.append(self.path)
        self._entry["path"] = self.path
        body = self._body()
        if body is None:
            return
        self._entry["body"] = body
        if self.path == "/api/show":
            name = fake._resolve(body.get("model") or body.get("name") or "")
            if name is None:
                self._error(404, f"model '{body.get('model')}' not found")
                return
            self._json(
                200,
                {
                    "modelfile": f"FROM {name}",
                    "parameters": "",
                    "template": "{{ .Prompt }}",
                    "details": self._details(),
                    "model_info": {
                        "general.architecture": "qwen2",
                        "general.parameter_count": 7_615_616_512,
                        "qwen2.context_length": fake.context_length,
                    },
                    "capabilities": ["completion"],
                    "modified_at": "2026-01-01T00:00:00Z",
                },
            )
        elif self.path == "/api/chat":
            with self._counted():
                if fake.serial:
                    with fake._busy:  # one generation at a time, like one local model
                        self._chat(body)
                else:
                    self._chat(body)
        else:
            self._error(404, "404 page not found")

    @contextlib.contextmanager
    def _counted(self) -> Any:
        fake = self.fake
        with fake._lock:
            fake.inflight += 1
            fake.max_inflight = max(fake.max_inflight, fake.inflight)
        try:
            yield
        finally:
            with fake._lock:
                fake.inflight -= 1

    def _chat(self, body: dict[str, Any]) -> None:
        fake = self.fake
        if fake.delay:
            fake._stop.wait(fake.delay)
        if not body.get("model"):
            self._error(400, "model is required")
            return
        fmt = body.get("format")
        if fmt not in (None, "", "json") and not isinstance(fmt, dict):
            self._error(400, f'invalid format: {json.dumps(fmt)}; expected "json" or a valid JSON Schema object')
            return
        if body.get("think") not in (None, False):
            self._error(400, f'"{body["model"]}" does not support thinking')
            return
        name = fake._resolve(body["model"])
        if name is None:
            self._error(404, f"model '{body['model']}' not found")
            return
        fake.requests.append(body)
        fault = fake._next_fault()
        stream = body.get("stream", True)
        if fault == "404":
            self._error(404, f"model '{body['model']}' not found")
            return
        if fault == "400":
            self._error(400, 'option "num_ctx" must be of type integer')
            return
        if fault == "500":
            self._error(500, "llama runner process has terminated: exit status 2")
            return
        if fault == "503":
            self._error(503, "server busy, please try again.  maximum pending requests exceeded")
            return
        if fault == "hang":
            fake._stop.wait(fake.hang_s)
            self.close_connection = True
            return
        if fault == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if fault == "midstream" and not stream:
            self._error(500, "an error was encountered while running the model: unexpected EOF")
            return

        messages = body.get("messages") or []
        options = body.get("options") or {}
        user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
        prompt_tokens = sum(fake.tokens(m.get("content", "")) + 4 for m in messages)
        num_ctx = int(options.get("num_ctx") or 4096)
        if prompt_tokens >= num_ctx:
            prompt_tokens = num_ctx // 2
        content = fake.answer_for(user, fmt)
        self._entry.update(prompt_tokens=prompt_tokens, num_ctx=num_ctx, stream=bool(body.get("stream", True)))
        if fault == "badschema":
            content = json.dumps({"entities": "none", "relations": [{"from": "a"}]})
        if fault == "badjson":
            content = "Sure! Here are the entities: Acme, Semrush."
        num_predict = int(options.get("num_predict") or -1)
        done_reason = "stop"
        if fault == "length":
            content, done_reason = content[: max(1, len(content) // 2)], "length"
        room = min(num_predict if num_predict > 0 else 10**9, num_ctx - prompt_tokens)
        if fake.tokens(content) > room:
            content, done_reason = content[: int(room * fake.chars_per_token)], "length"
        eval_count = fake.tokens(content) + 1
        self._entry["eval_tokens"] = eval_count
        final = {
            "model": body["model"],
            "created_at": _now(),
            "done": True,
            "done_reason": done_reason,
            "total_duration": 1_500_000_000,
            "load_duration": 10_000_000,
            "prompt_eval_count": prompt_tokens,
            "prompt_eval_duration": 200_000_000,
            "eval_count": eval_count,
            "eval_duration": int(eval_count / 20 * 1e9),
        }
        if not stream:
            self._json(200, {**final, "message": {"role": "assistant", "content": content}})
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if fault in ("drip", "endless", "nonjson"):
            self._misbehave(fault, body, content, final)
            return
        pieces = [content[i : i + 16] for i in range(0, len(content), 16)] or [""]
        sent = 0
        try:
            for index, piece in enumerate(pieces):
                if self._client_gone():
                    raise BrokenPipeError("client closed the stream")
                if fault == "midstream" and index == 1:
                    self._chunk({"error": "an error was encountered while running the model: unexpected EOF"})
                    break
                self._chunk({"model": body["model"], "created_at": _now(), "message": {"role": "assistant", "content": piece}, "done": False})
                sent += len(piece)
                time.sleep(fake.piece_s)
            else:
                self._chunk({**final, "message": {"role": "assistant", "content": ""}})
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):  # the client stopped reading: generation stops
            with fake._lock:
                fake.cancelled += 1
            self._entry["eval_tokens"] = fake.tokens(content[:sent]) + 1
            self._entry["cancelled"] = True
            self.close_connection = True

    def _misbehave(self, fault: str, body: dict[str, Any], content: str, final: dict[str, Any]) -> None:
        """A stream no real Ollama sends: the whole answer one byte at a time (`drip`), a line that
        never ends (`endless`), or a line of plain text after the first piece (`nonjson`)."""
        fake = self.fake
        first = json.dumps({"model": body["model"], "created_at": _now(), "message": {"role": "assistant", "content": content[:16]}, "done": False}) + "\n"
        try:
            if fault == "nonjson":
                self._raw((first + "<html>502 Bad Gateway</html>\n").encode())
            elif fault == "drip":
                for byte in (first + json.dumps({**final, "message": {"role": "assistant", "content": content[16:]}}) + "\n").encode():
                    if fake._stop.wait(fake.drip_s):
                        break
                    self._raw(bytes([byte]))
            else:
                self._raw(b'{"model": "' + body["model"].encode() + b'", "message": {"role": "assistant", "content": "')
                block = b"loop " * 13107  # 64 KB
                while not fake._stop.is_set():
                    self._raw(block)
                    fake.sent_bytes += len(block)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError, OSError):
            with fake._lock:
                fake.cancelled += 1
            self.close_connection = True

    def _raw(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _client_gone(self) -> bool:
        """True once the client closed its end (Ollama cancels the generation then)."""
        import select

        try:
            if select.select([self.connection], [], [], 0)[0]:
                return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True
        return False

    def _chunk(self, obj: dict[str, Any]) -> None:
        data = json.dumps(obj).encode() + b"\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def main() -> None:
    """Serve until killed: the benches' stand-in for one local model (one chat at a time)."""
    import argparse

    parser = argparse.ArgumentParser(description="A loopback Ollama stand-in (test fixture).")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=1.0, help="seconds per chat call")
    parser.add_argument("--parallel", action="store_true", help="answer chats concurrently (default: one at a time)")
    parser.add_argument("--log", type=Path, help="append one JSON line per request here")
    parser.add_argument("--model", action="append", default=[], help="model name to serve (repeatable)")
    args = parser.parse_args()
    models = {name: DIGEST_A for name in args.model} or None
    with FakeOllama(models=models, delay=args.delay, serial=not args.parallel, log_path=args.log, port=args.port, echo=True) as fake:
        print(f"listening on {fake.url}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
