"""The input formats' names, descriptions and aliases: the one place for them, read without loading any reader.

The command line builds its `import --format` help from these at start-up; `tests/formats/test_registry.py`
checks that they are exactly the registry's (`annotator.formats.registry`), in its detection order.
"""

FORMATS: dict[str, str] = {
    "batch": "an annotator's Excel batch (.xlsx from `batches`), filled in: their labels",
    "inspect_log": "an Inspect AI eval log (.eval or .json): one transcript per sample",
    "transcripts": "model transcripts, JSONL / JSON (data_id, model, prompt, response, ...)",
    "lm_eval": "lm-evaluation-harness --log_samples output (samples_<task>_<time>.jsonl): one transcript per answer",
    "openai_batch": "an OpenAI Batch API output file (JSONL; custom_id: data_id, data_id/prompt or "
                    "data_id/prompt/sample)",
    "treecut": "TreeCut JSONL (problem, answer, proof), parameters in the file name, or a directory of them",
    "umwp": "UMWP JSONL / JSON (id, question, answer, answerable, ...)",
    "gsm_ic": "GSM-IC JSON / JSONL (original_question, new_question, ...)",
    "reliablemath": "the ReliableMath release (a directory, or one solve / unsol .json file)",
    "check": "the ReliableMath authors' nested {source}_check.json",
    "annotation": "the paper's annotation sheet (Fig. 10), .json / .jsonl / .csv / .parquet",
    "table": "any flat .jsonl / .csv / .parquet, columns named with --map",
}
# Other names `--format` takes: the flat export formats read back as tables.
ALIASES: dict[str, str] = {
    "inspect": "inspect_log",
    "lm-eval": "lm_eval",
    "openai-batch": "openai_batch",
    "gsm-ic": "gsm_ic",
    "sheet": "annotation",
    "jsonl": "table",
    "csv": "table",
    "parquet": "table",
    "xlsx": "batch",
}
