"""A real Inspect AI eval log, written with inspect_ai's own API, for the readers' and the CLI's tests."""

from __future__ import annotations

from pathlib import Path

SOLVABLE = "aime_0"  # the first record of solve/aime.json
UNSOLVABLE = "aime_9_remove_1"


def inspect_log(path: Path) -> Path:
    """A real Inspect AI log, written with inspect_ai's own API."""
    from inspect_ai.log import EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
    from inspect_ai.log._log import EvalConfig
    from inspect_ai.model import ChatMessageUser, ContentReasoning, ContentText, GenerateConfig, ModelOutput

    samples = [
        EvalSample(id=SOLVABLE, epoch=1, input="Q1", target="204",
                   messages=[ChatMessageUser(content="Q1")],
                   output=ModelOutput.from_content("deepseek/r1", [
                       ContentReasoning(reasoning="Let me think."), ContentText(text="So \\boxed{204}.")
                   ])),
        EvalSample(id=7, epoch=2, input="Q2", target="113", metadata={"data_id": UNSOLVABLE, "prompt": "standard"},
                   messages=[ChatMessageUser(content="Q2")],
                   output=ModelOutput.from_content("deepseek/r1", "Assume D... \\boxed{113}")),
    ]
    spec = EvalSpec(created="2026-01-01T00:00:00+00:00", task="reliablemath", dataset=EvalDataset(name="aime"),
                    model="deepseek/r1", config=EvalConfig(), metadata={"prompt": "reliable"},
                    model_generate_config=GenerateConfig(temperature=0.0, max_tokens=4096))
    write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), str(path))
    return path
