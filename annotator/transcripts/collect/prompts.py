"""The problem-solving prompts a model is evaluated with.

ReliableMath (Appendix I.1): Fig. 14 is the *standard* prompt, Fig. 15 the *reliable* one, which also offers
`\\boxed{it’s unsolvable}` and `\\boxed{sorry, I don’t know}`. Their texts are the release's
`math_instruction.json` (`role`, `std`, `real`), curly quotes as there: "Let‘s" has U+2018, "it’s" and
"don’t" U+2019. The role line goes in the system message, as in the authors' code; the user message is the
instruction and the question laid out as in the figures.

TreeCut items get TreeCut's zero-shot prompt (its Appendix B.1): a chain-of-thought system message and a user
message asking for "Answer: x" or "Answer: unknown." (the paper has that one prompt for every model).
"""

from __future__ import annotations

from typing import Literal

PromptName = Literal["standard", "reliable"]
PROMPT_NAMES: tuple[PromptName, ...] = ("standard", "reliable")

# math_instruction.json "role", "std" and "real".
ROLE = (
    "You are a math problem solver. Solve the following math problem and provide the final answer in the specified "
    "format."
)
STANDARD_INSTRUCTION = "Let‘s think step by step and output the final answer within \\boxed{}."
RELIABLE_INSTRUCTION = (
    STANDARD_INSTRUCTION
    + " If the question is unsolvable, you can output \\boxed{it’s unsolvable}. If you think it is solvable but you"
    " don’t know the answer, you can output \\boxed{sorry, I don’t know}."
)
INSTRUCTIONS: dict[PromptName, str] = {"standard": STANDARD_INSTRUCTION, "reliable": RELIABLE_INSTRUCTION}

TREECUT_SYSTEM = "As an expert problem solver, solve step by step the following mathematical questions."
TREECUT_INSTRUCTION = (
    "Please solve the following math question, and then answer in the form 'Answer: x'. If the known conditions "
    "are not sufficient to answer the question, please answer in the form 'Answer: unknown.'."
)

# What `Transcript.params["template"]` says was sent.
RELIABLEMATH_TEMPLATE, TREECUT_TEMPLATE = "reliablemath", "treecut"


def messages(question: str, *, prompt: PromptName, treecut: bool = False) -> list[dict[str, str]]:
    """The chat messages that ask a model `question` (ReliableMath Fig. 14/15, or TreeCut's template)."""
    if treecut:
        return [
            {"role": "system", "content": TREECUT_SYSTEM},
            {"role": "user", "content": f"{TREECUT_INSTRUCTION}\n\nQuestion: {question}"},
        ]
    return [
        {"role": "system", "content": ROLE},
        {"role": "user", "content": f"{INSTRUCTIONS[prompt]}\n### Mathematical Question ###: {question}"},
    ]


def template(*, treecut: bool) -> str:
    return TREECUT_TEMPLATE if treecut else RELIABLEMATH_TEMPLATE
