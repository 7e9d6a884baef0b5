"""A real HTTP server on 127.0.0.1 speaking OpenAI's `POST /v1/chat/completions`, for tests and benchmarks.

Answers come from a script (by default `scripted_answer`, a deterministic stand-in for the construction
models) and can be overridden per prompt with injected faults: HTTP errors with `Retry-After`, slow answers
past the client's timeout, dropped connections, malformed answers. The server counts, per prompt hash
(`prompt_hash(messages)`), how many requests it received and how many answers it delivered in full, and it
can hold every request once n answers were delivered, or once a condition on the delivered answers holds
(to stop a client at a known point).

Run standalone (the benchmark does, to keep the server out of the client's process):
    python -m tests.support.openai_server --latency 0.1
prints `http://127.0.0.1:PORT/v1` and serves until killed.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One answer. `status` != 200 sends an OpenAI-style error; `drop` closes the connection unanswered;
    `body` sends these bytes as they are (e.g. not JSON); `delay` waits before answering."""

    content: str | None = ""
    reasoning_content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    delay: float = 0.0
    drop: bool = False


def prompt_hash(messages: Any) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def _field(prompt: str, header: str) -> str:
    # A field runs to the next header or to the prompt's next instruction line.
    match = re.search(rf"### {re.escape(header)} ###: (.*?)(?:\n### |\nThink step|\nBased on your|\Z)", prompt, re.S)
    return match.group(1).strip() if match else ""


def scripted_answer(prompt: str, model: str = "", conditions: int = 2) -> str:
    """A deterministic answer to each construction prompt, derived from the text it was given.

    Extraction gives two conditions (or one, with `conditions=1`); every rewrite is accepted, except that
    the contradiction of the second condition fails verification (so a run has pending and filtered ones).
    """
    first_line = prompt.split("\n", 1)[0]
    last_line = prompt.rstrip().rsplit("\n", 1)[-1]
    if first_line.startswith("You are an excellent extractor."):
        question = _field(prompt, "Mathematical Question")
        words = question.split()
        first = f"1. {' '.join(words[:4])}"
        return first if conditions == 1 else f"{first}\n\n2. The question: {' '.join(words[-4:])}"
    if first_line.startswith("You are a good mathematical question rewriter."):
        kind = "remove" if "need to remove the key condition" in prompt else "contradict"
        condition = _field(prompt, "Extracted Condition")
        question = _field(prompt, "Original Mathematical Question")
        return (
            f"### Analysis ###: Without '{condition}' the answer cannot be determined.\n"
            f"### Rewritten Mathematical Question ###: {question} [{kind}: {condition}]"
        )
    rewritten = _field(prompt, "Rewritten Mathematical Question")
    if last_line.startswith("### Your judgement") and "### Unsolvable Analysis ###" not in prompt:
        return "False" if "[contradict: The question:" in rewritten else "True"
    if last_line.startswith("### Your judgement"):
        return "### Unsolvable Analysis ###: A needed value is missing.\n### Your judgement (True or False) ###: True."
    if last_line.startswith("### Rewritten Condition"):
        marker = re.search(r"\[(\w+): (.*?)\]$", rewritten)
        return f"{marker.group(1)}: {marker.group(2)}" if marker else "unknown"
    if last_line.startswith("### Unsolvable Reason"):
        return f"### Unsolvable Reason ###: {_field(prompt, 'Unsolvable Analysis')} So it cannot be solved."
    return "I do not understand the prompt."


class OpenAIServer:
    """The server; use as a context manager or call `start()` / `stop()`.

    Args:
        answer: prompt text, model -> answer text (default `scripted_answer`).
        latency: seconds every request waits before it is answered.
    """

    def __init__(self, answer: Callable[[str, str], str] = scripted_answer, latency: float = 0.0) -> None:
        self.answer = answer
        self.latency = latency
        self.received: Counter[str] = Counter()
        self.completed: Counter[str] = Counter()
        self.answered_at: dict[str, list[float]] = {}  # per prompt hash: when each answer was delivered (time.time)
        self.prompts: dict[str, str] = {}
        self.authorizations: Counter[str] = Counter()  # Authorization headers seen (to prove a key was sent)
        self._faults: list[tuple[Callable[[str], bool], list[Reply]]] = []
        self._lock = threading.Lock()
        self._hold_when: Callable[[OpenAIServer], bool] | None = None
        self._release = threading.Event()
        self.held = 0
        self.inflight = 0
        self.max_inflight = 0  # most requests being answered at once
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- control ---------------------------------------------------------------------------------------------
    def inject(self, match: str | Callable[[str], bool], *replies: Reply) -> None:
        """The next requests whose prompt contains `match` (or satisfies it) get `replies`, in order."""
        test = (lambda prompt: match in prompt) if isinstance(match, str) else match
        with self._lock:
            self._faults.append((test, list(replies)))

    def hold_after(self, answers: int) -> None:
        """Hold every request that arrives after `answers` answers were delivered, until `release()`."""
        self.hold_when(lambda server: sum(server.completed.values()) >= answers)

    def hold_when(self, condition: Callable[[OpenAIServer], bool]) -> None:
        """Hold every request that arrives once `condition(self)` is true, until `release()`.

        The condition is evaluated under the server's lock: it may read `completed` and `prompts` directly.
        """
        with self._lock:
            self._hold_when = condition
            self._release.clear()

    def release(self) -> None:
        with self._lock:
            self._hold_when = None
            self._release.set()

    def completed_matching(self, text: str) -> int:
        """How many answers were delivered in full for prompts containing `text`."""
        with self._lock:
            return self._completed_matching(text)

    def _completed_matching(self, text: str) -> int:
        return sum(count for key, count in self.completed.items() if text in self.prompts.get(key, ""))

    def answer_times(self) -> dict[str, list[float]]:
        """When each prompt's answers were delivered (`time.time()`), a copy."""
        with self._lock:
            return {key: list(times) for key, times in self.answered_at.items()}

    def total_completed(self) -> int:
        with self._lock:
            return sum(self.completed.values())

    def reset_counts(self) -> None:
        with self._lock:
            self.received.clear()
            self.completed.clear()
            self.answered_at.clear()

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> OpenAIServer:
        server = _Server(("127.0.0.1", 0), _handler(self))
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="openai-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ---------------------------------------------------------------------------------------------
    def _reply_for(self, prompt: str, model: str) -> Reply:
        with self._lock:
            for test, replies in self._faults:
                if replies and test(prompt):
                    return replies.pop(0)
        return Reply(content=self.answer(prompt, model))

    def _should_hold(self) -> bool:
        with self._lock:
            if self._hold_when is None or not self._hold_when(self):
                return False
            self.held += 1
            return True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the listen backlog: a burst of new connections must not be refused


def _handler(state: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    """A handler class bound to `state` (the server's script, faults and counters)."""
    return type("Handler", (_Handler,), {"state": state})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    state: OpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _peer_closed(self) -> bool:
        try:
            return self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def do_POST(self) -> None:  # noqa: N802
        state = self.state
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        messages = request.get("messages", [])
        key = prompt_hash(messages)
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        with state._lock:
            state.received[key] += 1
            state.prompts[key] = prompt
            state.authorizations[self.headers.get("Authorization") or ""] += 1
            state.inflight += 1
            state.max_inflight = max(state.max_inflight, state.inflight)
        try:
            self._answer(request, key, prompt)
        finally:
            with state._lock:
                state.inflight -= 1

    def _answer(self, request: dict[str, Any], key: str, prompt: str) -> None:
        state = self.state
        if state._should_hold():
            state._release.wait(timeout=120)
            if self._peer_closed():  # the client went away (e.g. was killed) while we held it
                return
        reply = state._reply_for(prompt, request.get("model", ""))
        if state.latency or reply.delay:
            time.sleep(state.latency + reply.delay)
        if reply.drop:
            self._drop()
            return
        try:
            if reply.status != 200:
                self._send_error(reply)
                return
            self._send(200, reply.body or _completion_body(request, key, prompt, reply), reply.headers)
        except (BrokenPipeError, ConnectionResetError):
            return
        with state._lock:
            state.completed[key] += 1
            state.answered_at.setdefault(key, []).append(time.time())

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _send_error(self, reply: Reply) -> None:
        body = reply.body or json.dumps(
            {"error": {"message": f"injected {reply.status}", "type": "injected", "code": reply.status}}
        ).encode()
        self._send(reply.status, body, reply.headers)


def _completion_body(request: dict[str, Any], key: str, prompt: str, reply: Reply) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning_content is not None:
        message["reasoning_content"] = reply.reasoning_content
    return json.dumps({
        "id": f"chatcmpl-{key[:12]}", "object": "chat.completion", "created": int(time.time()),
        "model": request.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": len(prompt.split()), "completion_tokens": len((reply.content or "").split()),
            "total_tokens": len(prompt.split()) + len((reply.content or "").split()),
        },
    }).encode()


@contextmanager
def running(answer: Callable[[str, str], str] = scripted_answer, latency: float = 0.0) -> Iterator[OpenAIServer]:
    with OpenAIServer(answer, latency) as server:
        yield server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.0, help="seconds each request waits")
    parser.add_argument("--conditions", type=int, default=2, choices=(1, 2), help="conditions per extraction")
    args = parser.parse_args()
    answer = functools.partial(scripted_answer, conditions=args.conditions)
    server = OpenAIServer(answer=lambda prompt, model: answer(prompt, model), latency=args.latency).start()
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
