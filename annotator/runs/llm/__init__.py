"""One client layer for every OpenAI-compatible endpoint (OpenAI, DeepSeek, vLLM, llama.cpp, Ollama).

- Per role (`extract` = the instruction model M_I, `rewrite` = the reasoning model M_R): model, base URL,
  the NAME of the environment variable holding the API key (the key itself is read when the client is
  built and never stored or logged), temperature (default 0), max tokens, extra body, timeout.
- Bounded concurrency; bounded retries with exponential backoff and jitter on 429 (honouring
  `Retry-After`), 408/409, 5xx, timeouts and connection errors; after the last retry `LLMCallFailed`.
- A persistent call cache (`annotator.database.models.LLMCall`) keyed by `call_key(model, messages, params)`: a
  repeated call is answered from the database, identical calls in flight are sent once, and a completed
  call is committed before it is handed back, so a killed run never pays for it again.

All database work of a run happens on one thread (`Database`), batched into few short transactions, so
the event loop is free to keep `concurrency` requests in flight; `PrioritySlots` hands free request
slots to the most urgent waiter first.

Modules: `config` (RoleConfig), `calls` (call key, completion, counters, failure), `client` (LLMClient),
`database` (the run's database thread and call cache), `slots` (PrioritySlots).
"""

from annotator.runs.llm.calls import (
    CallStats,
    Completion,
    LLMCallFailed,
    Messages,
    call_key,
    params_json,
    parse_completion,
)
from annotator.runs.llm.client import RETRYABLE_STATUS, LLMClient
from annotator.runs.llm.config import DEFAULT_API_KEY_ENV, PLACEHOLDER_API_KEY, LLMConfigError, RoleConfig
from annotator.runs.llm.database import Database
from annotator.runs.llm.slots import PrioritySlots

__all__ = [
    "DEFAULT_API_KEY_ENV", "PLACEHOLDER_API_KEY", "RETRYABLE_STATUS", "CallStats", "Completion", "Database",
    "LLMCallFailed", "LLMClient", "LLMConfigError", "Messages", "PrioritySlots", "RoleConfig", "call_key",
    "params_json", "parse_completion",
]
