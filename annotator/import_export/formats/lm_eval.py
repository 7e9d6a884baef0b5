"""lm-evaluation-harness per-sample logs: the `samples_<task>_<time>.jsonl` that `lm_eval ... --log_samples` writes
(`EvaluationTracker.save_results_samples`), one line per doc and filter:
`{"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics", ...}`.

Each generated answer is one transcript: `resps[0][k]` is the k-th of the task's `repeats` and becomes sample k.
The raw responses are taken, not `filtered_resps` (a filter keeps an extract, e.g. the number a regex found),
and a doc logged once per filter (gsm8k's strict-match and flexible-extract) is read from its first filter's
line only. Only generated answers can be imported: a loglikelihood (multiple choice) task's line is refused.

- data_id: the doc's `data_id` field; or the doc field named by `--id-field`; or the `doc_id` looked up in an
  `--id-map` file (columns `doc_id`, `data_id` and optionally `task`, .csv / .jsonl / .json).
- model: `--model`, else the `model_name` of the run's results file beside the samples (`results_<time>.json`,
  or `<name>_<time>.json` when `--output_path` named a file), else the model named in its `config.model_args`.
- prompt: `--prompt`, else the task's name (from the file name).
- params: the request's generation kwargs (`arguments.gen_args_0.arg_1`: until, temperature, max_gen_toks...).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotator.database import names
from annotator.import_export.formats import _io
from annotator.import_export.formats.transcripts import transcript_record
from annotator.import_export.records import (
    ImportPart,
    InputError,
    Location,
    ReadOptions,
    TranscriptRecord,
    check_name,
    require,
)

NAME = "lm_eval"
KEYS = ("doc_id", "doc", "arguments", "resps", "filtered_resps")
# `samples_{task}_{date_id}.jsonl`, the date as EvaluationTracker writes it (datetime's isoformat, ':' as '-').
_FILE_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl$")
# The model_args keys lm-eval itself reads a model's name from, in its order (GeneralConfigTracker).
_MODEL_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


def sniff(path: Path) -> bool:
    sample = _io.first_row(path)
    return sample is not None and set(KEYS) <= set(sample)


def _task_and_time(path: Path) -> tuple[str | None, str | None]:
    match = _FILE_NAME.match(path.name)
    return (match["task"], match["time"]) if match else (None, None)


def _results_file(path: Path, time: str | None) -> Path | None:
    """The results file lm-eval wrote with these samples (same run, same time stamp), if it is there."""
    if time is None:
        return None
    named = path.with_name(f"results_{time}.json")
    if named.is_file():
        return named
    others = sorted(path.parent.glob(f"*_{time}.json"))
    return others[0] if len(others) == 1 else None


def _model_from_results(results: Path) -> str | None:
    data = _io.load_json(results)
    if not isinstance(data, dict):
        raise InputError(str(results), f"expected lm-eval's results object, got {type(data).__name__}")
    if isinstance(data.get("model_name"), str) and data["model_name"].strip():
        return data["model_name"]
    args = (data.get("config") or {}).get("model_args") if isinstance(data.get("config"), dict) else None
    if isinstance(args, dict):
        return next((str(args[key]) for key in _MODEL_KEYS if args.get(key)), None)
    if isinstance(args, str):
        pairs = dict(part.partition("=")[::2] for part in args.split(",") if "=" in part)
        return next((pairs[key] for key in _MODEL_KEYS if pairs.get(key)), None)
    return None


def _model(path: Path, options: ReadOptions) -> str:
    if options.model:
        return options.model
    _task, time = _task_and_time(path)
    results = _results_file(path, time)
    if results is None:
        raise InputError(str(path), "no results file of the same run beside it (results_<time>.json) to name the "
                         "model; give --model")
    model = _model_from_results(results)
    if model is None:
        raise InputError(str(results), "names no model (model_name, config.model_args); give --model")
    if (why := names.problem(model)) is not None:
        raise InputError(str(results), f"the model {names.shown(model)} {why}; give --model", field="model_name")
    return model


IdMap = dict[tuple[str | None, str], str]


def _id_map(path: Path) -> IdMap:
    """An --id-map file as {(task or None, doc_id): data_id}."""
    if not path.is_file():
        raise InputError(str(path), "no such file (given as --id-map)")
    found: dict[tuple[str | None, str], tuple[str, Location]] = {}
    for loc, row in _io.rows(path):
        for key in ("doc_id", "data_id"):
            if row.get(key) in (None, ""):
                raise loc.error("missing required field", key)
        task = str(row["task"]).strip() if row.get("task") not in (None, "") else None
        key = (task, str(row["doc_id"]).strip())
        if key in found:
            raise loc.error(f"doc_id {key[1]!r} is mapped twice (first at {found[key][1].record})", "doc_id")
        found[key] = (str(row["data_id"]).strip(), loc)
    return {key: data_id for key, (data_id, _loc) in found.items()}


def _data_id(obj: dict[str, Any], loc: Location, options: ReadOptions, task: str | None, id_map: IdMap | None) -> str:
    doc_id = obj["doc_id"]
    if id_map is not None:
        found = id_map.get((task, str(doc_id))) or id_map.get((None, str(doc_id)))
        if found is None:
            raise loc.error(f"doc_id {doc_id!r} is not in the --id-map file {options.id_map}", "doc_id")
        return found
    doc = obj["doc"]
    if not isinstance(doc, dict):
        raise loc.error(f"expected the doc as an object, got {type(doc).__name__}", "doc")
    field = options.id_field or "data_id"
    if field not in doc:
        hint = "" if options.id_field else ": name the doc's id field with --id-field, or map doc_id with --id-map"
        raise loc.error(f"the doc has no such field{hint}", f"doc.{field}")
    value = doc[field]
    # A numeric id (an index, say) is taken as its text.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise loc.error(f"expected an id (text or a whole number), got {value!r}"[:200], f"doc.{field}")
    return check_name(value, loc, f"doc.{field}")


def _answers(obj: dict[str, Any], loc: Location) -> list[str]:
    """The generated answers of a line (one per repeat); refused for a loglikelihood task's line."""
    resps = obj["resps"]
    if not isinstance(resps, list) or len(resps) != 1 or not isinstance(resps[0], list) or not resps[0]:
        raise loc.error("expected one request's generated answers ([[answer, ...]]); a multiple-choice "
                        "(loglikelihood) task has no generated text to import", "resps")
    for answer in resps[0]:
        if not isinstance(answer, str):
            raise loc.error(f"expected generated text, got {type(answer).__name__}: a loglikelihood task has no "
                            "generated text to import", "resps")
    return resps[0]


def _params(obj: dict[str, Any]) -> dict[str, Any] | None:
    arguments = obj.get("arguments")
    first = arguments.get("gen_args_0") if isinstance(arguments, dict) else None
    kwargs = first.get("arg_1") if isinstance(first, dict) else None
    return kwargs if isinstance(kwargs, dict) and kwargs else None


def read(path: Path, options: ReadOptions) -> list[ImportPart]:
    task, _time = _task_and_time(path)
    prompt = options.prompt or task
    if prompt is None:
        raise InputError(str(path), "cannot tell the task from the file name (samples_<task>_<time>.jsonl); give "
                         "--prompt")
    if (why := names.problem(prompt)) is not None:
        raise InputError(str(path), f"the task in the file name, {names.shown(prompt)}, {why}; give --prompt")
    model = _model(path, options)
    id_map = _id_map(Path(options.id_map)) if options.id_map is not None else None

    def records() -> Iterator[TranscriptRecord]:
        first_filter: Any = None
        for number, (loc, obj) in enumerate(_io.jsonl_rows(path)):
            for key in KEYS:
                require(obj, key, loc)
            if number == 0:
                first_filter = obj.get("filter")
            elif obj.get("filter") != first_filter:
                continue  # the same doc and answers, under another filter
            data_id = _data_id(obj, loc, options, task, id_map)
            for sample, answer in enumerate(_answers(obj, loc)):
                fields = {"data_id": data_id, "model": model, "prompt": prompt, "response": answer, "sample": sample,
                          "params": _params(obj)}
                yield transcript_record(fields, loc, source=NAME)

    return [ImportPart(str(path), records())]


