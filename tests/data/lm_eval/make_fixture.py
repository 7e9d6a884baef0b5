"""Make the lm-evaluation-harness fixture in this folder with lm-eval's own CLI and sample writer.

Run it with lm-eval installed (it is not a dependency of the project):

    python -m venv /tmp/venv-lmeval --system-site-packages
    /tmp/venv-lmeval/bin/pip install lm-eval==0.4.13
    /tmp/venv-lmeval/bin/python tests/data/lm_eval/make_fixture.py

The model is lm-eval's own `dummy` model (`lm_eval.models.dummy.DummyLM`), subclassed only to answer from a
script instead of "lol", so that the judge has real answers to class. Everything else is lm-eval's: the task
is a YAML task over local JSONL docs (`dataset_path: json`, no network), the run is `lm_eval run ...
--log_samples --output_path out`, and `samples_<task>_<time>.jsonl` / `results_<time>.json` are written by its
`EvaluationTracker`. Two tasks:

- `reliablemath_aime`: docs carry our `data_id`; `repeats: 2` (two samples per doc) and two filters (a doc is
  logged once per filter, as gsm8k's strict-match / flexible-extract are).
- `aime_plain`: docs without our id (the release's solve records: `id` is the position); `doc_id` is mapped to
  `data_id` with `aime_plain_map.csv`.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from lm_eval.api.registry import register_model
from lm_eval.models.dummy import DummyLM

HERE = Path(__file__).resolve().parent
RELEASE = HERE.parents[3] / "shared" / "data" / "reliablemath"

# The first words of a question -> the answers to its first and second request (repeats: 2).
SCRIPT = {
    "Every morning Aya": ["She walks 3 km/h, so the walk takes \\boxed{204} minutes.", "So \\boxed{200}."],
    "Let $ABC$ be a triangle inscribed": ["The tangents meet at $D$... so $AP = \\boxed{113}$.",
                                          "Without the lengths the problem is \\boxed{unsolvable}."],
    "Let $x$ and $y$ be real numbers": ["Then $xy = \\boxed{25}$.", "\\boxed{25}"],
    "There exist real numbers": ["Then $xy = \\boxed{25}$.", "\\boxed{25}"],
}


@register_model("scripted-dummy")
class ScriptedDummyLM(DummyLM):
    """lm-eval's dummy model answering from SCRIPT (the n-th request of a prompt gets its n-th answer)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.seen: Counter[str] = Counter()

    def generate_until(self, requests, disable_tqdm: bool = False):
        answers = []
        for request in requests:
            prompt = request.arguments[0]
            key = next((start for start in SCRIPT if start in prompt), None)
            if key is None:
                answers.append("I do not know.")
                continue
            answers.append(SCRIPT[key][self.seen[key] % 2])
            self.seen[key] += 1
        return answers


def _docs(work: Path) -> None:
    solve = json.loads((RELEASE / "solve" / "aime.json").read_text(encoding="utf-8"))
    unsol = {row["data_id"]: row for row in json.loads((RELEASE / "unsol" / "aime.json").read_text(encoding="utf-8"))}
    docs = [{"data_id": "aime_0", "question": solve[0]["question"], "answer": solve[0]["ground_truth"]},
            {"data_id": "aime_9_remove_1", "question": unsol["aime_9_remove_1"]["rewritten_question"],
             "answer": "unsolvable"}]
    with (work / "reliablemath_aime.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(doc, ensure_ascii=False) + "\n" for doc in docs)
    with (work / "aime_plain.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in solve[:3])


TASKS = {
    "reliablemath_aime": """task: reliablemath_aime
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{question}}}}\\nPut your final answer within \\\\boxed{{}}."
doc_to_target: "{{{{answer}}}}"
repeats: 2
generation_kwargs:
  until: ["</s>"]
  do_sample: false
  temperature: 0.0
  max_gen_toks: 2048
filter_list:
  - name: boxed
    filter:
      - function: regex
        regex_pattern: "\\\\\\\\boxed\\\\{{(.*?)\\\\}}"
      - function: take_first
  - name: whole
    filter:
      - function: take_first
metric_list:
  - metric: exact_match
""",
    "aime_plain": """task: aime_plain
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Problem: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{ground_truth}}}}"
generation_kwargs:
  until: ["Problem:"]
  do_sample: false
metric_list:
  - metric: exact_match
""",
}


def main() -> None:
    from lm_eval.__main__ import cli_evaluate

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        _docs(work)
        for name, text in TASKS.items():
            (work / f"{name}.yaml").write_text(text.format(data=work / f"{name}.jsonl"), encoding="utf-8")
        out = work / "out"
        sys.argv = ["lm_eval", "run", "--model", "scripted-dummy", "--model_args", "model=scripted-dummy",
                    "--tasks", "reliablemath_aime,aime_plain", "--include_path", str(work),
                    "--log_samples", "--output_path", str(out), "--seed", "0"]
        cli_evaluate()
        # lm-eval writes into out/<model name>/; the fixture keeps that folder as it is.
        target = HERE / "scripted-dummy"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(out / "scripted-dummy", target)
    (HERE / "aime_plain_map.csv").write_text("doc_id,data_id\n0,aime_0\n1,aime_1\n2,aime_2\n", encoding="utf-8")


if __name__ == "__main__":
    main()
