"""A role's configuration: its model's name is a name (`annotator.database.names`), as it is stored with every
answer."""

from __future__ import annotations

import pytest

from annotator.runs.llm import LLMConfigError, RoleConfig


def test_a_runs_model_is_a_name() -> None:
    with pytest.raises(LLMConfigError, match=r"^model 'judge\\x00' holds U\+0000 \(a control character\)"):
        RoleConfig(model="judge\x00").check()
    with pytest.raises(LLMConfigError, match=r"^model 'gpt\\u2067' holds U\+2067 RIGHT-TO-LEFT ISOLATE"):
        RoleConfig(model="gpt\u2067").check()
    RoleConfig(model="Qwen/Qwen2.5-7B-Instruct").check()
