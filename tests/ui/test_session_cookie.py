"""The app's own HTTP routes (`ui.session_cookie`) on a real app server (`streamlit run server.py`, a child
process): a body over the limit is refused (413) before it is read, by its Content-Length or, sent chunked, as
it grows, and the server's memory stays where it was; a client posting wrong code after code is made to wait
(429, Retry-After) without anyone else waiting; a right code still sets the cookie."""

from __future__ import annotations

import http.client
import re
import secrets
import select
import socket
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from annotator.accounts import auth
from annotator.database.engine import get_engine, write_session
from tests.e2e.conftest import RunningApp, start_app, stop_app
from tests.support.candidates import add_user
from ui import session_cookie
from ui.code_throttle import FREE_ATTEMPTS

MB = 1024 * 1024
CHUNK = 64 * 1024


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    folder = tmp_path_factory.mktemp("served")
    url = f"sqlite:///{folder / 'annotator.sqlite'}"
    get_engine(url)  # the schema, before the server opens it
    running = start_app(url, folder / "streamlit.log", script="server.py")
    yield running
    stop_app(running)


def _post(app: RunningApp, path: str, chunks: Iterable[bytes], headers: dict[str, str]) -> tuple[int, dict[str, str],
                                                                                              int]:
    """POST `chunks` as they come, stopping once the server has answered (or closed); the status, the headers
    (lower-case names) and how many bytes of the body went out."""
    address = urlsplit(app.url)
    with socket.create_connection((address.hostname, address.port), timeout=60) as sock:
        head = [f"POST {path} HTTP/1.1", f"Host: {address.netloc}", *(f"{k}: {v}" for k, v in headers.items())]
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("ascii"))
        sent = 0
        answered = select.poll()  # poll, not select: the test process may hold fds past select's 1024
        answered.register(sock, select.POLLIN)
        for chunk in chunks:
            if answered.poll(0):
                break  # the server answered before the body was all sent
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break  # it closed the connection (after answering)
            sent += len(chunk)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, {name.lower(): value for name, value in response.getheaders()}, sent


def _code_post(app: RunningApp, code: str, client: str) -> tuple[int, dict[str, str]]:
    """POST `code` to the session route as `client` (the address a proxy on the server's machine names)."""
    body = code.encode("ascii")
    status, headers, _sent = _post(app, session_cookie.SESSION_PATH, [body], {
        "Content-Length": str(len(body)), "X-Forwarded-For": client})
    return status, headers


def _sign_ins(app: RunningApp, count: int) -> list[str]:
    """The tokens of `count` sign-ins of a new account."""
    engine = get_engine(app.database_url)
    user = add_user(engine, f"user-{secrets.token_hex(4)}")
    with write_session(engine) as session:
        return [auth.start_sign_in(session, user=user) for _ in range(count)]


def _made_up_code() -> str:
    return secrets.token_urlsafe(32)  # the shape of a code, never issued


def _memory(pid: int) -> dict[str, int]:
    """The process's resident memory now (VmRSS) and at most since the last reset (VmHWM), in bytes."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {name: int(fields[name].split()[0]) * 1024 for name in ("VmRSS", "VmHWM")}


def _reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS (Linux)


def _zeros(total: int) -> Iterator[bytes]:
    block = b"0" * CHUNK
    for _ in range(total // CHUNK):
        yield block


def _chunked(blocks: Iterable[bytes]) -> Iterator[bytes]:
    for block in blocks:
        yield f"{len(block):x}\r\n".encode("ascii") + block + b"\r\n"
    yield b"0\r\n\r\n"


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_100_mb_body_is_refused_before_it_is_read_and_memory_stays(served: RunningApp, framing: str) -> None:
    pid = served.process.pid
    assert _code_post(served, _made_up_code(), "192.0.2.1")[0] == 403  # the route's code paths loaded
    before = _memory(pid)
    _reset_peak(pid)
    total = 100 * MB
    if framing == "content-length":
        headers = {"Content-Length": str(total), "X-Forwarded-For": "192.0.2.2"}
        status, answer, sent = _post(served, session_cookie.SESSION_PATH, _zeros(total), headers)
    else:
        headers = {"Transfer-Encoding": "chunked", "X-Forwarded-For": "192.0.2.3"}
        status, answer, sent = _post(served, session_cookie.SESSION_PATH, _chunked(_zeros(total)), headers)
    after = _memory(pid)
    assert status == 413 and answer.get("connection") == "close"
    assert sent < total // 2, sent  # refused long before the body was through
    assert after["VmHWM"] - before["VmRSS"] < 20 * MB, (before, after)  # the peak while it was posted
    assert after["VmRSS"] - before["VmRSS"] < 20 * MB, (before, after)


def test_bodies_over_the_limit_are_refused_and_at_the_limit_read(served: RunningApp) -> None:
    limit = session_cookie.MAX_BODY_BYTES
    for path in (session_cookie.SESSION_PATH, session_cookie.SIGN_OUT_PATH):
        over = b"a" * (limit + 1)
        sized = {"Content-Length": str(len(over)), "X-Forwarded-For": "192.0.2.10"}
        assert _post(served, path, [over], sized)[0] == 413
        chunked = {"Transfer-Encoding": "chunked", "X-Forwarded-For": "192.0.2.11"}
        assert _post(served, path, _chunked([over[:600], over[600:]]), chunked)[0] == 413
    at_limit = b"a" * limit  # read, and not a code
    sized = {"Content-Length": str(limit), "X-Forwarded-For": "192.0.2.12"}
    assert _post(served, session_cookie.SESSION_PATH, [at_limit], sized)[0] == 403
    chunked = {"Transfer-Encoding": "chunked"}
    assert _post(served, session_cookie.SIGN_OUT_PATH, _chunked([b"x" * 10]), chunked)[0] == 204


def test_a_client_posting_wrong_codes_waits_and_no_one_else_does(served: RunningApp) -> None:
    guesser = "203.0.113.7"
    assert [_code_post(served, _made_up_code(), guesser)[0] for _ in range(FREE_ATTEMPTS)] == [403] * FREE_ATTEMPTS
    status, headers = _code_post(served, _made_up_code(), guesser)
    assert status == 429 and re.fullmatch(r"[1-9][0-9]*", headers["retry-after"]), headers
    # Someone else at the same time: a wrong code is just wrong, and a right one sets the cookie.
    assert _code_post(served, _made_up_code(), "198.51.100.2")[0] == 403
    [token] = _sign_ins(served, 1)
    code = session_cookie.issue(get_engine(served.database_url), token=token, max_age=3600)
    status, headers = _code_post(served, code, "198.51.100.2")
    assert status == 204 and headers["set-cookie"].startswith(f"{session_cookie.COOKIE}={token};")


def test_a_burst_of_wrong_codes_at_once_gets_no_more_through(served: RunningApp) -> None:
    """Counted when let through, before the database answers: sent all at once, no more are checked than in turns."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(lambda _: _code_post(served, _made_up_code(), "203.0.113.99")[0], range(40)))
    assert sorted(set(statuses)) == [403, 429] and statuses.count(403) == FREE_ATTEMPTS, statuses


def test_right_codes_from_one_address_never_wait(served: RunningApp) -> None:
    """An office: many people signing in from one address."""
    engine = get_engine(served.database_url)
    for token in _sign_ins(served, 2 * FREE_ATTEMPTS):
        assert _code_post(served, session_cookie.issue(engine, token=token, max_age=60), "198.51.100.50")[0] == 204
    assert _code_post(served, _made_up_code(), "198.51.100.50")[0] == 403
