"""Transcripts as Inspect AI eval logs: one `.json` log (Inspect's EvalLog schema, version 2) per model and
prompt, so that a team can open them in Inspect's viewer (`inspect view --log-dir OUT`) or read them with
`inspect_ai.log.read_eval_log`; `import --format inspect_log` reads them back as the same transcripts.

A log's task is the prompt and its model the model. Each transcript is a sample: `id` the item's data_id,
`epoch` the sample number + 1, `input` the question the item puts (the rewritten question of a candidate),
`target` its answer ("unsolvable" on an unsolvable item; the original answer is in the metadata), `messages`
the question and the answer (reasoning as a reasoning block), `output` the answer with its stop reason and
token counts, `scores["verdict"]` the effective verdict (S / R / F: the human's where given, else the judge's)
with the extracted answer, and `metadata` the item, the judge's and the human's verdicts, tags, comment, params
and finish_reason. Only the question text is known for an imported transcript, not the prompt it was sent
with. File names follow Inspect's `{timestamp}_{task}_{model}_{id}.json`, which its log listing needs.

Samples are built with inspect_ai's own types and written one at a time after the log's header (whose results
come from one counting query), so memory does not grow with the number of transcripts.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import groupby
from pathlib import Path
from typing import IO, Any

from sqlalchemy import func, select
from sqlmodel import Session

from annotator.database.models import Transcript
from annotator.database.vocabulary import Verdict
from annotator.import_export.exports import transcripts as transcripts_export
from annotator.transcripts.collect.storing import iter_transcripts
from annotator.transcripts.evaluation_set import Item, items_by_data_id

SCORE = "verdict"
_COLUMNS = (Transcript.reasoning, Transcript.params, Transcript.finish_reason, Transcript.prompt_tokens,
            Transcript.completion_tokens)
# OpenAI-style finish reasons as Inspect's stop reasons (the original is kept in the sample's metadata).
_STOP_REASONS = {"stop": "stop", "length": "max_tokens", "max_tokens": "max_tokens", "tool_calls": "tool_calls",
                 "content_filter": "content_filter", "model_length": "model_length"}
_ITEMS_AT_ONCE = 500


def nothing_to_write(session: Session) -> str | None:
    """Why the Inspect export would hold no sample, or None: as for the transcripts export."""
    return transcripts_export.nothing_to_write(session)


def _slug(text: str) -> str:
    # Inspect splits a log's file name on "_" to find its task: none may appear inside a part.
    return re.sub(r"[^A-Za-z0-9.-]+", "-", text).strip("-")[:60] or "x"


def _file_name(stamp: str, model: str, prompt: str) -> str:
    digest = hashlib.sha256(json.dumps([model, prompt]).encode("utf-8")).hexdigest()[:10]
    return f"{stamp}_{_slug(prompt)}_{_slug(model)}_{digest}.json"


def _verdict_counts(session: Session) -> dict[tuple[str, str], Counter[str | None]]:
    verdict = func.coalesce(Transcript.human, Transcript.judge)
    query = select(Transcript.model, Transcript.prompt, verdict, func.count()).group_by(
        Transcript.model, Transcript.prompt, verdict)
    counts: dict[tuple[str, str], Counter[str | None]] = {}
    for model, prompt, value, count in session.execute(query):
        counts.setdefault((model, prompt), Counter())[value] = count
    return counts


def _header(*, model: str, prompt: str, created: str, counts: Counter[str | None]) -> str:
    """The log without its samples, as JSON text ending before the closing brace."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalMetric, EvalResults, EvalScore, EvalSpec

    total = sum(counts.values())
    judged = sum(count for value, count in counts.items() if value is not None)
    metrics = {str(v): EvalMetric(name=str(v), value=counts[str(v)] / judged if judged else 0.0) for v in Verdict}
    spec = EvalSpec(created=created, task=prompt, dataset=EvalDataset(name="annotator", samples=total), model=model,
                    config=EvalConfig(), metadata={"prompt": prompt, "exported_by": "annotator"})
    results = EvalResults(total_samples=total, completed_samples=total, scores=[
        EvalScore(name=SCORE, scorer=SCORE, scored_samples=judged, unscored_samples=total - judged, metrics=metrics)])
    log = EvalLog(status="success", eval=spec, results=results)
    # Without None fields, as inspect_ai writes its logs: its header reader refuses `"error": null`.
    text = log.model_dump_json(exclude={"samples", "reductions"}, exclude_none=True)
    return text[: text.rindex("}")]


def _target(item: Item | None) -> str:
    if item is None:
        return ""
    if item.unsolvable:
        return "unsolvable"
    answer = item.ground_truth
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


def _metadata(row: dict[str, Any], item: Item | None) -> dict[str, Any]:
    keys = ("data_id", "prompt", "judge_rule", "judge_class", "extracted_answer", "judge", "human", "verdict",
            "tags", "comment", "params", "finish_reason")
    metadata = {key: row[key] for key in keys}
    if item is not None:
        metadata |= {"data_source": item.data_source, "unsolvable": item.unsolvable, "rewrite_type": item.rewrite_type,
                     "difficulty_eval": item.difficulty_eval, "original_answer": item.ground_truth}
    return metadata


def _sample(row: dict[str, Any], item: Item | None) -> Any:
    from inspect_ai.log import EvalSample
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        ChatMessageUser,
        ContentReasoning,
        ContentText,
        ModelOutput,
        ModelUsage,
    )
    from inspect_ai.scorer import Score

    question = item.question if item is not None else row["data_id"]
    content: Any = row["response"]
    if row["reasoning"]:
        content = [ContentReasoning(reasoning=row["reasoning"]), ContentText(text=row["response"])]
    answer = ChatMessageAssistant(content=content, model=row["model"], source="generate")
    usage = None
    if row["prompt_tokens"] is not None and row["completion_tokens"] is not None:
        usage = ModelUsage(input_tokens=row["prompt_tokens"], output_tokens=row["completion_tokens"],
                           total_tokens=row["prompt_tokens"] + row["completion_tokens"])
    stop = _STOP_REASONS.get(row["finish_reason"] or "stop", "unknown")
    output = ModelOutput(model=row["model"], choices=[ChatCompletionChoice(message=answer, stop_reason=stop)],
                         usage=usage)
    scores = None
    if row["verdict"] is not None:
        explanation = f"{row['judge_rule']} judge: {row['judge_class']} -> {row['judge']}"
        if row["human"] is not None:
            explanation += f"; reviewer: {row['human']}"
        scores = {SCORE: Score(value=row["verdict"], answer=row["extracted_answer"], explanation=explanation)}
    return EvalSample(id=row["data_id"], epoch=row["sample"] + 1, input=question, target=_target(item),
                      messages=[ChatMessageUser(content=question), answer], output=output, scores=scores,
                      metadata=_metadata(row, item))


def _chunks(rows: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == _ITEMS_AT_ONCE:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _write_samples(session: Session, handle: IO[str], rows: Iterator[dict[str, Any]]) -> int:
    count = 0
    for chunk in _chunks(rows):
        items = items_by_data_id(session, data_ids={row["data_id"] for row in chunk})
        for row in chunk:
            sample = _sample(row, items.get(row["data_id"]))
            handle.write(("" if count == 0 else ",\n") + sample.model_dump_json(exclude_none=True))
            count += 1
    return count


def write_inspect_logs(session: Session, out: Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC).replace(microsecond=0)
    stamp, created = now.strftime("%Y-%m-%dT%H-%M-%S+00-00"), now.isoformat()
    counts = _verdict_counts(session)
    written: dict[str, int] = {}
    rows = iter_transcripts(session, columns=_COLUMNS, by_model_and_prompt=True)
    for (model, prompt), group in groupby(rows, key=lambda row: (row["model"], row["prompt"])):
        name = _file_name(stamp, model, prompt)
        with (out / name).open("w", encoding="utf-8", newline="\n") as handle:
            handle.write(_header(model=model, prompt=prompt, created=created, counts=counts[(model, prompt)]))
            handle.write(',"samples":[\n')
            written[name] = _write_samples(session, handle, group)
            handle.write("\n]}\n")
    return written
