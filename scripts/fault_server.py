"""A fault-injecting OpenAI-compatible chat-completions server of our own (issue 17).

A real socket on 127.0.0.1 (a free port chosen by the OS, read back), so LLM judges meet faults
the way they meet them in production: through their HTTP client, its timeout and its errors.
Each ``POST /v1/chat/completions`` is answered

* **by itself** (default): a valid answer built from the request, the same for the same prompt.
  For paper 004's Appendix D prompt every turn of the dialogue in the prompt is labelled;
  otherwise the answer is an instance of the JSON schema the request carries
  (``response_format.schema``, as todeval's judges send it to OpenAI-compatible servers);
* **or by an upstream** (``upstream=`` / ``--upstream URL``, e.g. the llama.cpp server of
  ``scripts/llm_server.py``): the request is forwarded and the upstream's answer passed back;
* **or by a script** (``reply=``, e.g. :func:`scripted_agent_reply`, ``--scripted-agent``): the
  assistant message (text or tool calls) is built from the request, the same for the same
  messages, so an agent under test can be played by the server (issue 30).

``delay_s`` (``--delay-s``) holds every good answer that long, as a remote model's latency does.
The server counts the requests it holds at once (:attr:`FaultServer.max_in_flight`) and keeps
every request body (:attr:`FaultServer.bodies`), so a test can check how many calls a client
had in flight and what it sent (its ``seed``, say).

A seeded schedule turns a fraction of requests (``fault_rate``, default 30 %) into one of
:data:`FAULTS`: ``rate_limit`` (429 with ``Retry-After``), ``server_error`` (500), ``hang``
(nothing for ``hang_s``, longer than the client's timeout, then the connection is dropped),
``malformed_body`` (200 whose JSON body is cut), ``refusal`` (a normal 200 whose content is a
refusal sentence), ``cut_off`` (200 whose content is JSON cut in the middle). The draw depends
only on the seed, the request's messages and how often those messages were asked before, so it
does not depend on how concurrent requests interleave. Set ``fault_rate = 0`` (``--fault-rate
0``, same ``--port``) for a fault-free second run.

Every request is logged (:class:`LoggedRequest`: sha256 of the messages, of the prompt they
start with, the model, the fault or ``"ok"``), so a test can tell which prompts were asked again.

Use it as a context manager (``with FaultServer() as server: server.base_url``) or run
``python -m scripts.fault_server --port 0 --fault-rate 0.3 [--upstream URL] [--log FILE]
[--delay-s S] [--scripted-agent]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

FAULTS = ("rate_limit", "server_error", "hang", "malformed_body", "refusal", "cut_off")
"""What a faulty request gets instead of a good answer."""
UPSTREAM_TIMEOUT_S = 600.0
"""How long a forwarded request may take upstream (a small model on a busy CPU is slow)."""
REFUSAL = "I'm sorry, but I can't help with evaluating this conversation."
"""The content of a ``refusal``: no JSON at all."""

Plan = Callable[[str, int], str | None]
"""``(sha of the messages, times asked before) -> fault or None``: a scripted schedule."""
Reply = Callable[[dict[str, Any]], dict[str, Any]]
"""``request body -> assistant message`` (``content`` and/or ``tool_calls``): a scripted answer."""


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the server saw it.

    Attributes:
        n: Its place in the log (requests are logged when answered).
        at: When it arrived, in seconds since the server started.
        took_s: Seconds from arrival until the answer was written (or a ``hang`` let go).
        model: The model the request named.
        sha: sha256 of the messages (role and content of each, in order).
        prompt_sha: sha256 of the messages before the first assistant turn: the judge's rendered
            prompt, the same for its retries with feedback (which append turns).
        fault: One of :data:`FAULTS`; ``"ok"`` for a good answer; ``"upstream_error"`` when the
            upstream answered with an error (passed on) or not at all (a 502).
        answer_sha: sha256 of the content sent back in a 200, else ``""`` (a judge's cache
            stores that text when it parses, so a test can tell which answers were stored).
    """

    n: int
    at: float
    took_s: float
    model: str
    sha: str
    prompt_sha: str
    fault: str
    answer_sha: str = ""


def messages_sha(messages: Sequence[dict[str, Any]]) -> str:
    """sha256 of a chat request's messages (role and content only)."""
    canonical = [[m.get("role"), m.get("content")] for m in messages]
    return hashlib.sha256(json.dumps(canonical, ensure_ascii=False).encode()).hexdigest()


def prompt_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages before the first assistant turn (what a judge's retries share)."""
    head: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "assistant":
            break
        head.append(message)
    return head


class FaultSchedule:
    """Which requests get a fault: seeded, per message list and repeat, thread-safe."""

    def __init__(self, rate: float, seed: int, faults: Sequence[str] = FAULTS) -> None:
        unknown = set(faults) - set(FAULTS)
        if unknown or not faults or not 0.0 <= rate <= 1.0:
            raise ValueError(f"bad fault schedule: {rate=}, {faults=}")
        self.rate, self.seed, self.faults = rate, seed, tuple(faults)

    def draw(self, sha: str, asked_before: int) -> str | None:
        """The fault for this request, or None (independent of other requests' timing)."""
        rng = random.Random(f"{self.seed}:{sha}:{asked_before}")
        return rng.choice(self.faults) if rng.random() < self.rate else None


# -- answers built from the request ---------------------------------------------------------

_TURN = re.compile(r"^Turn (\d+)$", re.MULTILINE)
_DIALOG_ID = re.compile(r"^dialog_id: (.*)$", re.MULTILINE)
_RCOF = [f"E{n}" for n in range(1, 8)]


def self_answer(body: dict[str, Any]) -> str:
    """A valid answer to a chat request, the same for the same messages and schema."""
    messages = prompt_messages(body.get("messages") or [])
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    seed = hashlib.sha256(prompt.encode()).hexdigest()
    turns = [int(n) for n in _TURN.findall(prompt)]
    if "RCOF codes" in prompt and turns:  # paper 004's Appendix D call
        return json.dumps(appendix_d_answer(prompt, turns, seed))
    response_format = body.get("response_format") or {}
    schema = response_format.get("schema") or (response_format.get("json_schema") or {}).get(
        "schema"
    )
    if not isinstance(schema, dict):
        return json.dumps({"answer": f"ok {seed[:8]}"})
    return json.dumps(schema_instance(schema, schema, random.Random(seed)))


def scripted_agent_reply(body: dict[str, Any]) -> dict[str, Any]:
    """An agent under test played by the server: a tool call after each user message, then text.

    After a user message it calls the first tool the request offers (a customer look-up in
    banking) with the arguments it requires; after a tool result it answers in words. The
    tool-call id is derived from the messages, so the same conversation gives the same
    transcript whatever the timing.
    """
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    tools = [t.get("function", t) for t in body.get("tools") or [] if isinstance(t, dict)]
    if last.get("role") != "user" or not tools:
        answered = sum(1 for m in messages if m.get("role") == "tool")
        return {"role": "assistant", "content": f"Done: I checked that ({answered} look-ups)."}
    tool = tools[0]
    required = (tool.get("parameters") or {}).get("required") or []
    arguments = {name: f"{name}-1" for name in required}
    call_id = f"call_{messages_sha(messages)[:16]}"
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": tool.get("name", ""), "arguments": json.dumps(arguments)},
            }
        ],
    }


def appendix_d_answer(prompt: str, turns: Sequence[int], seed: str) -> dict[str, Any]:
    """Labels for every turn the prompt shows, as Appendix D's output format asks."""
    found = _DIALOG_ID.search(prompt)
    labelled = []
    for turn in dict.fromkeys(turns):  # a window's context turn is shown once
        rng = random.Random(f"{seed}:{turn}")
        failure = rng.random() < 0.3
        labelled.append(
            {
                "turn_number": turn,
                "is_new_goal": "yes" if turn == 1 or rng.random() < 0.3 else "no",
                "quality": "failure" if failure else "success",
                "rcof": rng.choice(_RCOF) if failure else None,
            }
        )
    return {"dialog_id": found.group(1).strip() if found else "unknown", "turns": labelled}


def schema_instance(schema: dict[str, Any], root: dict[str, Any], rng: random.Random) -> Any:
    """A value valid under a (pydantic-generated) JSON schema, drawn from ``rng``."""
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return schema_instance(root.get("$defs", {}).get(name, {}), root, rng)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        concrete = [o for o in options if o.get("type") != "null"] or options
        return schema_instance(rng.choice(concrete), root, rng)
    if "allOf" in schema:
        return schema_instance(schema["allOf"][0], root, rng)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        return {key: schema_instance(value, root, rng) for key, value in properties.items()}
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [schema_instance(schema.get("items", {}), root, rng) for _ in range(count)]
    low, high = schema.get("minimum", 0), schema.get("maximum", 10)
    simple: dict[str, Callable[[], Any]] = {
        "string": lambda: f"s{rng.randrange(1000)}",
        "integer": lambda: rng.randint(int(low), int(high)),
        "number": lambda: round(rng.uniform(float(low), float(high)), 3),
        "boolean": lambda: rng.random() < 0.5,
    }
    return simple.get(str(kind), lambda: None)()


def completion(
    model: str,
    content: str,
    prompt_chars: int,
    usage: dict[str, Any] | None = None,
    message: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An OpenAI chat completion around ``content`` (or a whole scripted ``message``).

    Without ``usage``, tokens are estimated from characters.
    """
    prompt_tokens, completion_tokens = prompt_chars // 4 + 1, len(content) // 4 + 1
    message = message or {"role": "assistant", "content": content}
    return {
        "id": f"chatcmpl-{hashlib.sha256(content.encode()).hexdigest()[:12]}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": usage
        or {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


# -- the server ------------------------------------------------------------------------------


class FaultServer:
    """The server, started and stopped as a context manager (or :meth:`start`/:meth:`stop`).

    Args:
        fault_rate: The share of requests that get a fault (0 for none); may be changed later.
        seed: Seeds the schedule.
        faults: The faults drawn from (default all of :data:`FAULTS`).
        plan: A scripted schedule instead of the seeded one (tests).
        upstream: An OpenAI-compatible base URL to forward good requests to (proxy mode).
        reply: A scripted assistant message per request body instead of the built answer.
        delay_s: How long every good answer is held before it is sent (a model's latency).
        hang_s: How long a ``hang`` holds the request before dropping the connection.
        retry_after_s: The ``Retry-After`` of a ``rate_limit`` answer.
        log_path: Also append every :class:`LoggedRequest` to this JSON Lines file.
        port: 0 (default) for a free port.
    """

    def __init__(
        self,
        *,
        fault_rate: float = 0.3,
        seed: int = 17,
        faults: Sequence[str] = FAULTS,
        plan: Plan | None = None,
        upstream: str | None = None,
        reply: Reply | None = None,
        delay_s: float = 0.0,
        hang_s: float = 10.0,
        retry_after_s: float = 1.0,
        log_path: Path | None = None,
        port: int = 0,
    ) -> None:
        self.schedule = FaultSchedule(fault_rate, seed, faults)
        self.plan, self.upstream = plan, upstream.rstrip("/") if upstream else None
        self.hang_s, self.retry_after_s, self.log_path = hang_s, retry_after_s, log_path
        self.reply, self.delay_s = reply, delay_s
        self.requests: list[LoggedRequest] = []
        self.bodies: list[dict[str, Any]] = []
        """Every chat request's body, in the order received."""
        self.in_flight = 0
        self.max_in_flight = 0
        """The most chat requests held at once (received, not yet answered)."""
        self._asked: Counter[str] = Counter()
        self._received = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._started = time.monotonic()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._httpd.daemon_threads = True  # a hung request never holds up stop()
        self._httpd.block_on_close = False
        self._thread: threading.Thread | None = None

    @property
    def fault_rate(self) -> float:
        """The share of requests that get a fault; set it to 0 for a fault-free run."""
        return self.schedule.rate

    @fault_rate.setter
    def fault_rate(self, rate: float) -> None:
        self.schedule = FaultSchedule(rate, self.schedule.seed, self.schedule.faults)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the port the OS gave)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FaultServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def logged(self, count: int, timeout_s: float = 10.0) -> list[LoggedRequest]:
        """The request log once it holds ``count`` requests (or after ``timeout_s``).

        A request is logged after its answer is sent, so a client can hold the answer a moment
        before the log shows the request.
        """
        deadline = time.monotonic() + timeout_s
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        with self._lock:
            return list(self.requests)

    def stop(self) -> None:
        """Stop serving; hung requests are let go."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def faults_by_kind(self) -> Counter[str]:
        """How many requests got each fault (and ``"ok"``)."""
        with self._lock:
            return Counter(request.fault for request in self.requests)

    # -- what one request gets ----------------------------------------------------------------

    def now(self) -> float:
        """Seconds since the server started."""
        return time.monotonic() - self._started

    @property
    def received(self) -> int:
        """Requests received so far, answered or not (the log holds the answered ones)."""
        with self._lock:
            return self._received

    def arrive(self, body: dict[str, Any]) -> None:
        """A chat request is held: kept, and counted in flight until :meth:`leave`."""
        with self._lock:
            self.bodies.append(body)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        """A held chat request was answered (or dropped)."""
        with self._lock:
            self.in_flight -= 1

    def decide(self, model: str, sha: str) -> str:
        """Draw the fate of one request: a fault of :data:`FAULTS`, or ``"ok"``."""
        with self._lock:
            self._received += 1
            asked_before = self._asked[f"{model}/{sha}"]
            self._asked[f"{model}/{sha}"] += 1
            draw = self.plan if self.plan is not None else self.schedule.draw
            return draw(sha, asked_before) or "ok"

    def log(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        done: tuple[str, str],
        arrived: float,
    ) -> LoggedRequest:
        """Log one answered request (and append it to ``log_path``)."""
        with self._lock:
            logged = LoggedRequest(
                n=len(self.requests),
                at=round(arrived, 4),
                took_s=round(self.now() - arrived, 4),
                model=model,
                sha=messages_sha(messages),
                prompt_sha=messages_sha(prompt_messages(messages)),
                fault=done[0],
                answer_sha=done[1],
            )
            self.requests.append(logged)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(asdict(logged)) + "\n")
        return logged

    def answer(
        self, body: dict[str, Any], raw: bytes, headers: dict[str, str]
    ) -> tuple[str, dict[str, Any] | None]:
        """The good answer's content and token usage: built here, or the upstream's."""
        self.hold()
        if self.upstream is None:
            return self_answer(body), None
        request = urllib.request.Request(
            f"{self.upstream}/chat/completions", data=raw, headers=headers, method="POST"
        )
        with urllib.request.urlopen(request, timeout=UPSTREAM_TIMEOUT_S) as response:
            reply = json.loads(response.read())
        return str(reply["choices"][0]["message"].get("content") or ""), reply.get("usage")

    def hold(self) -> None:
        """Wait ``delay_s`` before a good answer (less when the server stops)."""
        if self.delay_s > 0:
            self._stopping.wait(self.delay_s)

    def hang(self) -> None:
        """Hold a request for ``hang_s`` (less when the server stops)."""
        self._stopping.wait(self.hang_s)


def _handler_for(server: FaultServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as OpenAI's client expects

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the request log is the record."""

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": "fault", "object": "model"}]})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            arrived = server.now()
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(raw)
                messages = [dict(m) for m in body["messages"]]
            except (ValueError, KeyError, TypeError) as exc:
                self._json(400, {"error": {"message": f"bad request: {exc}"}})
                return
            model = str(body.get("model", ""))
            server.arrive(body)
            done = (server.decide(model, messages_sha(messages)), "")
            try:
                done = self._respond(done[0], body, raw, model)
            except OSError:
                pass  # the client gave up (a hang outlived its timeout)
            finally:
                server.leave()
                server.log(model, messages, done, arrived)

        def _respond(
            self, fault: str, body: dict[str, Any], raw: bytes, model: str
        ) -> tuple[str, str]:
            """Answer as ``fault`` says; return what was done and the sha of a 200's content."""
            if fault == "rate_limit":
                error = {"message": "Rate limit reached", "type": "rate_limit_error"}
                self._json(429, {"error": error}, {"Retry-After": f"{server.retry_after_s:g}"})
                return fault, ""
            if fault == "server_error":
                self._json(500, {"error": {"message": "injected fault", "type": "server_error"}})
                return fault, ""
            if fault == "malformed_body":
                self._send(200, b'{"id": "chatcmpl-cut", "choices": [{"message": {"con')
                return fault, ""
            if fault == "hang":  # then drop the connection unanswered, as a dead backend does
                server.hang()
                self.close_connection = True
                return fault, ""
            usage, message = None, None
            if fault == "refusal":
                content = REFUSAL
            elif server.reply is not None:
                server.hold()
                message = server.reply(body)
                content = str(message.get("content") or "")
            else:
                headers = {"Content-Type": "application/json"}
                if auth := self.headers.get("Authorization"):
                    headers["Authorization"] = auth
                try:
                    content, usage = server.answer(body, raw, headers)
                except urllib.error.HTTPError as exc:  # passed on as the upstream sent it
                    retry = {"Retry-After": exc.headers["Retry-After"]} if exc.headers else {}
                    self._send(exc.code, exc.read(), {k: v for k, v in retry.items() if v})
                    return "upstream_error", ""
                except Exception as exc:  # noqa: BLE001 - no answer at all: a 502
                    self._json(502, {"error": {"message": f"upstream: {exc}"}})
                    return "upstream_error", ""
            if fault == "cut_off":
                content = content[: max(1, len(content) // 2)]
            prompt_chars = sum(len(str(m.get("content", ""))) for m in body["messages"])
            if message is not None and fault == "cut_off":
                message = {**message, "content": content}
            self._json(200, completion(model, content, prompt_chars, usage, message))
            return fault, hashlib.sha256(content.encode()).hexdigest()

        def _json(
            self, status: int, payload: dict[str, Any], extra: dict[str, str] | None = None
        ) -> None:
            self._send(status, json.dumps(payload).encode(), extra)

        def _send(self, status: int, data: bytes, extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until interrupted; print the base URL, then a tally of faults at the end."""
    parser = argparse.ArgumentParser(
        prog="python -m scripts.fault_server",
        description="An OpenAI-compatible chat server on 127.0.0.1 that injects faults.",
    )
    parser.add_argument("--port", type=int, default=0, help="0 (default): a free port")
    parser.add_argument("--fault-rate", type=float, default=0.3, help="0 for none (default 0.3)")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument(
        "--faults", default=",".join(FAULTS), help="comma list of " + "/".join(FAULTS)
    )
    parser.add_argument("--upstream", default=None, help="forward good requests to this base URL")
    parser.add_argument("--delay-s", type=float, default=0.0, help="hold every good answer")
    parser.add_argument(
        "--scripted-agent",
        action="store_true",
        help="answer as a scripted agent under test (a tool call after each user message)",
    )
    parser.add_argument("--hang-s", type=float, default=10.0)
    parser.add_argument("--retry-after-s", type=float, default=1.0)
    parser.add_argument("--log", type=Path, default=None, help="append the request log (JSONL)")
    args = parser.parse_args(argv)
    try:
        server = FaultServer(
            fault_rate=args.fault_rate,
            seed=args.seed,
            faults=[f.strip() for f in args.faults.split(",") if f.strip()],
            upstream=args.upstream,
            reply=scripted_agent_reply if args.scripted_agent else None,
            delay_s=args.delay_s,
            hang_s=args.hang_s,
            retry_after_s=args.retry_after_s,
            log_path=args.log,
            port=args.port,
        )
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):  # also when started in the background
        signal.signal(sig, lambda _sig, _frame: stop.set())
    with server:
        print(f"base URL: {server.base_url}", flush=True)
        stop.wait()
    print(f"requests: {dict(server.faults_by_kind())}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
