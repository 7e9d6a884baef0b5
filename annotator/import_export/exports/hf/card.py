"""The Hugging Face dataset card (`README.md`) of the `hf` export: YAML front matter that `datasets` reads (the
configs and their files, license, task categories, size category, pretty name) and sections on how the set was
built, the human check and its agreement, the precision (the audit's, or "not audited") and the citations.

The card is built from the data: every name or text that comes from it goes into the YAML as a double-quoted
scalar (`yaml_string`) and into the Markdown escaped (`markdown_text`), so no value can add a key or a link.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from annotator.figures import stats
from annotator.figures.agreement import COEFFICIENTS, label_agreement
from annotator.import_export.exports.hf.citations import RELIABLEMATH, SOURCES
from annotator.labelling.guidelines import RELIABLEMATH_G3
from annotator.labelling.labels import label_rows
from annotator.labelling.queue import label_importers, label_target, labels_wanted

LICENSE = "cc-by-4.0"  # the ReliableMath release's; each source's own terms apply to its problems
TASK_CATEGORIES = ("question-answering", "text-generation")
# The Hub's size categories: (upper bound, name), the first bound above the number of rows.
SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                   (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"))
NOT_AUDITED = "not audited"


@dataclass(frozen=True)
class AuditedPrecision:
    """The audit's estimate of the share of vetted candidates that are truly unsolvable: `unsolvable` of the
    `sample` a reviewer re-checked, the share and its 95% Wilson interval (`low`, `high`)."""

    unsolvable: int
    sample: int
    share: float
    low: float
    high: float


@dataclass(frozen=True)
class Config:
    """One config of the dataset: its name, kind (`unsol` / `solve`, also its split), data source, file, rows,
    and columns as (name, type, whether its values mixed types)."""

    name: str
    kind: str
    source: str
    path: str
    rows: int
    columns: list[tuple[str, str, bool]]


# Characters a double-quoted YAML scalar does not keep as they are: those outside YAML 1.1's printable set (which
# PyYAML reads), its line breaks (NEL, U+2028, U+2029: folded to a space) and the byte order mark. Written as escapes.
_YAML_UNPRINTABLE = re.compile("[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$^:])")


def yaml_string(text: str) -> str:
    """`text` as a YAML double-quoted scalar that reads back as exactly `text` (JSON's escapes, which YAML shares,
    and `\\uXXXX` / `\\UXXXXXXXX` for what YAML would refuse raw)."""
    quoted = json.dumps(text, ensure_ascii=False)
    return _YAML_UNPRINTABLE.sub(lambda m: f"\\u{ord(m[0]):04x}" if ord(m[0]) <= 0xFFFF else f"\\U{ord(m[0]):08x}",
                                 quoted)


def markdown_text(text: str) -> str:
    """`text` shown as text in Markdown: HTML's special characters as entities, Markdown's punctuation escaped,
    line breaks as spaces."""
    text = " ".join(str(text).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def size_category(rows: int) -> str:
    return next((name for bound, name in SIZE_CATEGORIES if rows < bound), "n>100M")


def card_facts(session: Session, *, include_incomplete: bool = False) -> dict[str, Any]:
    """What the card says about the project, read from the database: the counts, the vetted rule, who
    labelled and their agreement on human_check (people only: imported labels are not a rater)."""
    target = label_target(session)
    counted = stats.compute(session)
    agreement = label_agreement(label_rows(session))["human_check"]
    return {
        "total": counted["total"], "problems": counted["problems"],
        "rewrite_types": _rewrite_types(counted), "labels_wanted": labels_wanted(
            target.labels, count_imported=target.count_imported),
        "include_incomplete": include_incomplete, "annotators": len(agreement["annotators"]),
        "agreement": agreement, "importers": label_importers(session),
    }


def _rewrite_types(counted: dict[str, Any]) -> dict[str, int]:
    """Vetted candidates per rewrite type, over every source."""
    found: dict[str, int] = {}
    for entry in counted["sources"].values():
        for rewrite_type, counts in entry["by_rewrite_type"].items():
            if counts["vetted"]:
                found[rewrite_type] = found.get(rewrite_type, 0) + counts["vetted"]
    return found


def _front_matter(configs: Sequence[Config], pretty_name: str) -> list[str]:
    lines = ["---", f"pretty_name: {yaml_string(pretty_name)}", f"license: {yaml_string(LICENSE)}",
             "language:", "- en", "task_categories:", *(f"- {yaml_string(task)}" for task in TASK_CATEGORIES),
             "size_categories:", f"- {yaml_string(size_category(sum(config.rows for config in configs)))}",
             "tags:", "- math", "- unsolvable-problems", "- hallucination", "configs:"]
    for index, config in enumerate(configs):
        lines += [f"- config_name: {yaml_string(config.name)}", "  data_files:",
                  f"  - split: {yaml_string(config.kind)}", f"    path: {yaml_string(config.path)}"]
        if index == 0:
            lines.append("  default: true")
    return [*lines, "---"]


def _configs_table(configs: Sequence[Config]) -> list[str]:
    lines = ["| config | data source | split | rows | fields |", "|---|---|---|---:|---|"]
    for config in configs:
        fields = ", ".join(f"`{name}` ({dtype}{', mixed types written as JSON text' if mixed else ''})"
                           if name.isidentifier() else f"{markdown_text(name)} ({dtype})"
                           for name, dtype, mixed in config.columns)
        lines.append(f"| `{config.name}` | {markdown_text(config.source)} | `{config.kind}` | {config.rows} | "
                     f"{fields} |")
    return lines


def _built(facts: dict[str, Any], configs: Sequence[Config]) -> list[str]:
    total, types = facts["total"], facts["rewrite_types"]
    by_type = ", ".join(f"{count} {markdown_text(name)}" for name, count in sorted(types.items())) or "none"
    sources = ", ".join(dict.fromkeys(markdown_text(config.source) for config in configs)) or "none"
    rule = (f"its labels resolve to human_check = 1 over {facts['labels_wanted']}, or a reviewer decided so"
            + ("; candidates whose fewer labels so far resolve to 1 are included too" if facts["include_incomplete"]
               else ""))
    return [
        "## How it was built", "",
        f"{facts['problems']} solvable problems from the data sources {sources} were rewritten to be unsolvable "
        "as in the ReliableMath workflow (Xue et al., 2025): one necessary condition removed, or one added that "
        "contradicts the others, and every rewrite checked by people. The `solve_` configs hold the problems; the "
        f"`unsol_` configs hold the rewrites that passed the check ({total['vetted']} vetted of {total['checked']} "
        f"checked; by rewrite type: {by_type}).",
        "", f"A rewrite is vetted when {rule}.", "",
    ]


def _coefficient_lines(block: dict[str, Any]) -> list[str]:
    lines = []
    for coefficient in COEFFICIENTS:
        value = block.get(coefficient.key)
        reason = (block.get("undefined") or {}).get(coefficient.key)
        shown = f"{value:.3f}" if isinstance(value, float) else "undefined" + (
            f" ({markdown_text(reason)})" if reason else "")
        lines.append(f"- {coefficient.label}: {shown}")
    return lines


def _precision_line(audited: AuditedPrecision | None) -> str:
    if audited is None:
        return f"Precision (share of vetted candidates that are truly unsolvable): {NOT_AUDITED}."
    return (f"Precision (share of vetted candidates that are truly unsolvable): {audited.share:.3f}, 95% Wilson "
            f"interval [{audited.low:.3f}, {audited.high:.3f}], from a reviewer's re-check of {audited.sample} "
            f"vetted candidates ({audited.unsolvable} truly unsolvable).")


def _human_check(facts: dict[str, Any], audited: AuditedPrecision | None) -> list[str]:
    block = facts["agreement"]
    importers = ", ".join(markdown_text(name) for name in facts["importers"])
    imported = (f" Labels that came with an import ({importers}) vote in the resolved label but are no rater here."
                if importers else "")
    who = (f"{facts['annotators']} annotator(s) of the team labelled the rewrites" if facts["annotators"]
           else "No annotator of the team labelled the rewrites")
    return [
        "## The human check", "",
        f"{who} (each vetted one has {facts['labels_wanted']}).{imported} Agreement on human_check over "
        f"{block['items']} labelled rewrite(s):", "",
        *_coefficient_lines(block), "", _precision_line(audited), "",
        "The guideline the annotators followed:", "",
        *(f"> {line}".rstrip() for line in RELIABLEMATH_G3.strip().splitlines()), "",
    ]


def _citations(configs: Sequence[Config]) -> list[str]:
    lines = ["## Citation", "", "ReliableMath, whose construction and release format this dataset follows:", "",
             "```bibtex", RELIABLEMATH.strip(), "```", ""]
    for source in dict.fromkeys(config.source for config in configs):
        entry = SOURCES.get(source.lower())
        if entry is None:
            lines += [f"The data source {markdown_text(source)}: no citation is known here; cite the source's own.",
                      ""]
        else:
            lines += [f"The data source {markdown_text(source)}:", "", "```bibtex", entry.strip(), "```", ""]
    return lines


def dataset_card(
    configs: Sequence[Config], facts: dict[str, Any], *, audited_precision: AuditedPrecision | None = None
) -> str:
    """The card's text: front matter, then the sections (see the module's docstring)."""
    pretty_name = "Vetted unsolvable math problems"
    summary = (f"{facts['total']['vetted']} human-vetted unsolvable math problems and the {facts['problems']} "
               "solvable problems they were rewritten from, in the ReliableMath release's rows and fields.")
    body = [f"# {pretty_name}", "", summary, "", "## Configs", "", *_configs_table(configs), "",
            "Load one with `datasets.load_dataset(FOLDER, CONFIG)`.", "",
            *_built(facts, configs), *_human_check(facts, audited_precision), *_citations(configs)]
    return "\n".join([*_front_matter(configs, pretty_name), "", *body]).rstrip("\n") + "\n"
