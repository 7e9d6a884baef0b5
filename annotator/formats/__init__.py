"""Input formats: detection and reading, one module per external format; writing lives in `annotator.exports`.

| format       | what                                                                     |
|--------------|--------------------------------------------------------------------------|
| batch        | an annotator's Excel batch (`batches`), filled in: their labels only      |
| inspect_log  | an Inspect AI eval log (`.eval` / `.json`), one transcript per sample     |
| transcripts  | model transcripts, JSONL / JSON (`data_id`, `model`, `prompt`, `response`) |
| lm_eval      | lm-evaluation-harness `--log_samples` files (`samples_<task>_<time>.jsonl`) |
| openai_batch | OpenAI Batch API output files (`custom_id`, `response.body`)              |
| treecut      | TreeCut JSONL (`problem`, `answer`, `proof`), parameters in the file name  |
| umwp         | UMWP JSONL / JSON (`id`, `question`, `answer`, `answerable`, ...)          |
| gsm_ic       | GSM-IC JSON / JSONL (`original_question`, `new_question`, ...)             |
| reliablemath | the released dataset: a directory, or single solve / unsol files        |
| check        | the authors' nested `{source}_check.json`                               |
| annotation   | the paper's annotation sheet (Fig. 10), .json / .jsonl / .csv / .parquet |
| table        | any flat .jsonl / .csv / .parquet, columns named with `--map`            |

Each module declares its `Format` (name, description, `sniff`, `read`); `registry()` lists them in detection
order. Readers yield the records of `annotator.records` and touch no database: `annotator.importer` writes
what they yield. Importing this package loads no reader; `registry()`, `detect` and `read` do.
"""

from __future__ import annotations

from annotator.formats.registry import Format, ReadOptions, aliases, detect, read, read_all, registry
from annotator.records import ImportPart, InputError, InputErrors

__all__ = ["Format", "ImportPart", "InputError", "InputErrors", "ReadOptions", "aliases", "detect", "read", "read_all",
           "registry"]
