"""The client layer against a real local HTTP server: cache, retries, timeouts, concurrency, secrets."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, func, select, text

from annotator.database.engine import PROJECT_ROOT, read_session
from annotator.database.models import LLMCall
from annotator.runs.llm import (
    CallStats,
    Database,
    LLMCallFailed,
    LLMClient,
    LLMConfigError,
    RoleConfig,
    call_key,
)
from tests.support.openai_server import OpenAIServer, Reply, prompt_hash

SECRET = "sk-test-not-a-real-key-4242"


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(answer=lambda prompt, model: f"echo[{model}]: {prompt}") as running:
        yield running


def _messages(text_: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text_}]


async def _call(engine: Engine, config: RoleConfig, texts: list[str], **kwargs: object) -> tuple[list, CallStats]:
    db = Database(engine)
    stats = CallStats()
    client = LLMClient(db=db, roles={"m": config}, stats=stats, **kwargs)  # type: ignore[arg-type]
    try:
        results = await asyncio.gather(*(client.complete("m", _messages(t)) for t in texts), return_exceptions=True)
    finally:
        await client.aclose()
        db.close()
    return list(results), stats


def _config(server: OpenAIServer, **kwargs: object) -> RoleConfig:
    return RoleConfig(model="tiny", base_url=server.url, api_key_env="TEST_LLM_KEY", **kwargs)  # type: ignore[arg-type]


def test_answer_is_cached_and_never_asked_twice(
    server: OpenAIServer, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", SECRET)
    server.inject("with reasoning", Reply(content="42", reasoning_content="think think"))
    config = _config(server, max_tokens=64, extra_body={"top_k": 1})

    [first, second], stats = asyncio.run(_call(engine, config, ["hello", "with reasoning"]))
    assert first.content == "echo[tiny]: hello" and not first.cached
    assert (second.content, second.reasoning_content) == ("42", "think think")
    assert first.prompt_tokens == 1 and first.completion_tokens == 2
    assert stats.requests == 2 and stats.cache_hits == 0

    # A new client and a new Database: the answers come from the table, the server is not asked again.
    [again, again2], stats = asyncio.run(_call(engine, config, ["hello", "with reasoning"]))
    assert again.cached and again.content == first.content
    assert again2.reasoning_content == "think think"
    assert stats.requests == 0 and stats.cache_hits == 2
    assert set(server.received.values()) == {1}

    # A changed parameter is a different request.
    [other], stats = asyncio.run(_call(engine, _config(server, max_tokens=65, extra_body={"top_k": 1}), ["hello"]))
    assert not other.cached and stats.requests == 1
    assert server.received[prompt_hash(_messages("hello"))] == 2

    with read_session(engine) as session:
        rows = session.execute(select(LLMCall)).scalars().all()
        assert {row.key for row in rows} == {
            call_key("tiny", _messages("hello"), {"temperature": 0.0, "max_tokens": 64, "extra_body": {"top_k": 1}}),
            call_key("tiny", _messages("with reasoning"), config.params()),
            call_key("tiny", _messages("hello"), {"temperature": 0.0, "max_tokens": 65, "extra_body": {"top_k": 1}}),
        }
        # The key is read from the named variable and stored nowhere.
        for table in ("llmcall",):
            dump = " ".join(str(v) for row in session.execute(text(f"SELECT * FROM {table}")) for v in row)
            assert SECRET not in dump and "TEST_LLM_KEY" not in dump


def test_call_key_tells_every_request_apart_and_is_the_same_in_every_process() -> None:
    params = {"temperature": 0.0}
    user = [{"role": "user", "content": "bc"}]
    keys = [
        call_key("a", user, params),
        call_key("ab", [{"role": "user", "content": "c"}], params),  # same characters, other boundary
        call_key("a", [{"role": "system", "content": "bc"}], params),
        call_key("a", user + [{"role": "user", "content": ""}], params),
        call_key("a", user, {"temperature": 0.5}),
        call_key("a", [{"role": "user", "content": [{"type": "text", "text": "bc"}]}], params),
    ]
    assert len(set(keys)) == len(keys)
    assert call_key("a", user, params) == call_key("a", user, '{"temperature":0.0}')
    script = ("from annotator.runs.llm import call_key; "
              "print(call_key('a', [{'role': 'user', 'content': 'bc'}], {'temperature': 0.0}))")
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=PROJECT_ROOT)
    assert other.stdout.strip() == keys[0]


def test_retries_429_honouring_retry_after_then_succeeds(server: OpenAIServer, engine: Engine) -> None:
    server.inject("limited", Reply(status=429, headers={"Retry-After": "0.5"}), Reply(status=429))
    [result], stats = asyncio.run(_call(engine, _config(server), ["limited"], backoff_base=0.001))
    assert result.content.endswith("limited")
    assert stats.requests == 3 and stats.retries == 2
    # The first wait is the server's half second; the second 429 said nothing, so our (tiny) backoff.
    assert stats.retry_delays[0] == 0.5 and stats.retry_delays[1] < 0.1
    assert stats.retry_reasons["rate_limit"] == 2


def test_retries_server_errors_timeouts_and_dropped_connections(server: OpenAIServer, engine: Engine) -> None:
    server.inject("five", Reply(status=500), Reply(status=503))
    # Far past the timeout, and the timeout far above an ordinary answer's time on a loaded machine, so
    # only the injected delay can time out.
    server.inject("slow", Reply(delay=30.0))
    server.inject("dropped", Reply(drop=True))
    results, stats = asyncio.run(
        _call(engine, _config(server, timeout=3.0), ["five", "slow", "dropped"], backoff_base=0.01)
    )
    assert [r.content for r in results] == ["echo[tiny]: five", "echo[tiny]: slow", "echo[tiny]: dropped"]
    assert stats.retries == 4 and stats.failures == 0
    assert server.received[prompt_hash(_messages("five"))] == 3
    assert server.received[prompt_hash(_messages("slow"))] == 2
    assert server.received[prompt_hash(_messages("dropped"))] == 2


def test_gives_up_after_bounded_retries_and_caches_nothing(server: OpenAIServer, engine: Engine) -> None:
    server.inject("broken", *[Reply(status=500)] * 10)
    server.inject("bad request", Reply(status=400))
    [broken, bad], stats = asyncio.run(
        _call(engine, _config(server), ["broken", "bad request"], max_retries=2, backoff_base=0.01)
    )
    assert isinstance(broken, LLMCallFailed) and broken.kind == "server_error" and broken.attempts == 3
    assert isinstance(bad, LLMCallFailed) and bad.status == 400 and bad.attempts == 1
    assert server.received[prompt_hash(_messages("broken"))] == 3
    assert server.received[prompt_hash(_messages("bad request"))] == 1
    assert stats.failures == 2
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(LLMCall)).scalar_one() == 0


def test_concurrency_is_bounded_and_identical_requests_are_sent_once(engine: Engine) -> None:
    with OpenAIServer(latency=0.2) as slow:
        texts = [f"q{i}" for i in range(12)] + ["q0", "q0"]
        results, stats = asyncio.run(_call(engine, _config(slow), texts, concurrency=3))
    assert all(not isinstance(r, BaseException) for r in results)
    assert slow.max_inflight == 3
    assert slow.received[prompt_hash(_messages("q0"))] == 1
    assert stats.requests == 12


def test_missing_key_for_openai_itself_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMConfigError, match="NO_SUCH_KEY_VAR is not set"):
        RoleConfig(model="gpt-4o", api_key_env="NO_SUCH_KEY_VAR").api_key()
    # A local server needs no key.
    assert RoleConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key_env="NO_SUCH_KEY_VAR").api_key()
    assert "api_key" not in RoleConfig(model="m").public()


def test_a_200_that_is_not_a_chat_completion_fails_cleanly(server: OpenAIServer, engine: Engine) -> None:
    server.inject("garbage", Reply(body=b"<html>oops</html>"))
    server.inject("no choices", Reply(body=b'{"object": "chat.completion"}'))
    [garbage, empty], stats = asyncio.run(_call(engine, _config(server), ["garbage", "no choices"]))
    assert isinstance(garbage, LLMCallFailed) and garbage.kind == "bad_response"
    assert not isinstance(empty, BaseException) and empty.content == ""  # recorded; the parser calls it unreadable
    assert stats.failures == 1
