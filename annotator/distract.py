"""GSM-IC-style variants of solvable problems: one irrelevant sentence added before the question.

Following the GSM-IC paper's Appendix A (Shi et al., 2023): the off-topic templates of its Table 9; role
names that overlap with the problem's character (`X's father`, `X's mother`, `X's brother`, `X's sister`,
`X's neighbor`) or do not (Ada, David, Emma, Jack, John, Mary, Max, Tom); numbers in range (integers in
[l/10, 10r], l and r the smallest and largest number in the problem and its solution) or out of range
(`a * 10^b` above 10r, or in [2, l/10) when l > 10^5). Where an overlapping role makes a pronoun in the
question ambiguous (their Table 10), a leading `he` / `she` of the question is replaced by the character's
name, as the GSM-IC authors did by hand; other pronouns are flagged for the human check.

The answer of a variant is the original answer; a `distractor` candidate's human check asks whether the
answer is unchanged and the problem unambiguous.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from annotator.db import read_session
from annotator.exports import gsm_ic as gsm_ic_export
from annotator.models import Candidate, Problem
from annotator.records import CandidateRecord, ImportPart, Location
from annotator.vocabulary import DataId, RewriteType

TEMPLATES = (
    "The shoe size of {role} is {number}.",
    "{role} is {number} years old.",
    "The height of {role} is {number} feet.",
    "{role} bought {number} tomatoes from the grocery store.",
    "{role} has read {number} books in the past year.",
)
RELATIONS = ("father", "mother", "brother", "sister", "neighbor")
OTHER_NAMES = ("Ada", "David", "Emma", "Jack", "John", "Mary", "Max", "Tom")
ROLE_KINDS = ("overlapped", "nonoverlapped")
NUMBER_KINDS = ("in_range", "out_range")
GENERATOR = "distract"
# Capitalised words that are not a character's name.
_NOT_NAMES = {
    "A",
    "An",
    "The",
    "If",
    "How",
    "What",
    "When",
    "Where",
    "Which",
    "Who",
    "Why",
    "Each",
    "Every",
    "In",
    "On",
    "At",
    "For",
    "After",
    "Before",
    "Then",
    "There",
    "This",
    "That",
    "These",
    "Those",
    "She",
    "He",
    "They",
    "It",
    "His",
    "Her",
    "Their",
    "Its",
    "We",
    "I",
    "You",
    "Our",
    "My",
    "Your",
    "Some",
    "All",
    "One",
    "Two",
    "Three",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Question",
    "But",
    "And",
    "So",
    "Since",
    "While",
    "Of",
    "To",
    "From",
    "With",
    "By",
    "Mr",
    "Mrs",
    "Ms",
    "Dr",
    "Let",
    "Find",
    "Compute",
    "Evaluate",
    "Determine",
    "Calculate",
    "Solve",
    "Show",
    "Prove",
    "Suppose",
    "Given",
    "Assume",
}
_NUMBER_RE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'$])")
_PRONOUN_RE = re.compile(r"\b(she|he|her|his|him|they|them|their)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Options:
    per_problem: int = 4
    role: str = "both"  # overlapped / nonoverlapped / both
    number: str = "both"  # in_range / out_range / both
    seed: int = 0

    def __post_init__(self) -> None:
        if self.per_problem < 1:
            raise ValueError("--per-problem must be at least 1")
        if self.role not in (*ROLE_KINDS, "both"):
            raise ValueError(f"--role must be overlapped, nonoverlapped or both, got {self.role!r}")
        if self.number not in (*NUMBER_KINDS, "both"):
            raise ValueError(f"--number must be in_range, out_range or both, got {self.number!r}")


def numbers_in(*texts: str | None) -> list[float]:
    """Every number written in the texts (thousands separators allowed), as floats."""
    found = []
    for text in texts:
        for match in _NUMBER_RE.finditer(text or ""):
            try:
                found.append(float(match.group().replace(",", "")))
            except ValueError:
                continue
    return found


def number_range(*texts: str | None) -> tuple[float, float]:
    """(l, r): the smallest and largest positive number in the problem and its solution."""
    values = [v for v in numbers_in(*texts) if v > 0]
    return (min(values), max(values)) if values else (1.0, 1.0)


def in_range_number(low: float, high: float, rng: random.Random) -> int:
    start, end = max(1, math.ceil(low / 10)), max(1, math.floor(10 * high))
    return rng.randint(start, max(start, end))


def out_of_range_number(low: float, high: float, rng: random.Random) -> int:
    if low > 1e5:
        return rng.randint(2, max(2, math.ceil(low / 10) - 1))
    # n = a * 10^b with n > 10 r
    b = max(0, math.floor(math.log10(10 * high)) + 1)
    return rng.randint(1, 9) * 10**b


def main_character(question: str) -> str | None:
    """The most mentioned capitalised name in the problem, if any."""
    # Words of multi-word capitalised phrases ("Bistro Nice", "New York") and words after a preposition of
    # place are places or brands, not characters.
    places = set()
    for phrase in re.findall(r"\b[A-Z][\w']*(?: [A-Z][\w']*)+", question):
        places.update(phrase.replace("'s", "").split())
    places.update(re.findall(r"\b(?:at|in|to|from|of) ([A-Z][a-z]+)\b", question))
    # A word capitalised only because it opens a sentence ("Evaluate ...") counts once it shows up again.
    starts = Counter(re.findall(r"(?:^|[.!?]\s+)([A-Z][a-z]+)\b", question))
    words = Counter(re.findall(r"\b[A-Z][a-z]+\b", question))
    counts = Counter(
        {
            word: n
            for word, n in words.items()
            if word not in _NOT_NAMES and word not in places and (n > starts[word] or starts[word] >= 2)
        }
    )
    return counts.most_common(1)[0][0] if counts else None


def split_question(question: str) -> tuple[str, str]:
    """(the conditions, the final question sentence)."""
    sentences = _SENTENCE_END_RE.split(question.strip())
    if len(sentences) == 1:
        return "", sentences[0]
    return " ".join(sentences[:-1]), sentences[-1]


@dataclass
class Variant:
    new_question: str
    role: str
    number: str
    sentence_template: str
    role_label: str
    number_label: str
    sentence_label: str = "out_topic"
    ambiguity_note: str | None = None

    @property
    def sentence(self) -> str:
        return self.sentence_template.format(role=self.role, number=self.number)

    def gsm_ic_fields(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "number": self.number,
            "sentence_template": self.sentence_template,
            "role_label": self.role_label,
            "number_label": self.number_label,
            "sentence_label": self.sentence_label,
        }


def make_variants(
    question: str, *, solution: str | None = None, answer: Any = None, options: Options, rng: random.Random
) -> list[Variant]:
    """`options.per_problem` distinct variants of one solvable problem."""
    low, high = number_range(question, solution, None if answer is None else str(answer))
    character = main_character(question)
    roles = [k for k in ROLE_KINDS if options.role in (k, "both")]
    if character is None:
        roles = ["nonoverlapped"]  # nothing to overlap with
    numbers = [k for k in NUMBER_KINDS if options.number in (k, "both")]
    others = [name for name in OTHER_NAMES if not re.search(rf"\b{name}\b", question)] or list(OTHER_NAMES)
    head, final = split_question(question)
    variants: list[Variant] = []
    seen: set[str] = set()
    attempts = 0
    while len(variants) < options.per_problem and attempts < options.per_problem * 20:
        i = attempts
        attempts += 1
        role_label, number_label = roles[i % len(roles)], numbers[(i // len(roles)) % len(numbers)]
        role = f"{character}'s {rng.choice(RELATIONS)}" if role_label == "overlapped" else rng.choice(others)
        value = in_range_number(low, high, rng) if number_label == "in_range" else out_of_range_number(low, high, rng)
        template = rng.choice(TEMPLATES)
        sentence = template.format(role=role, number=value)
        if sentence in seen:
            continue
        seen.add(sentence)
        asked, note = final, None
        if role_label == "overlapped":
            asked, note = _disambiguate(final, character or "")
        new_question = f"{head} {sentence} {asked}" if head else f"{sentence} {asked}"
        variants.append(
            Variant(new_question, role, str(value), template, role_label, number_label, ambiguity_note=note)
        )
    return variants


def _disambiguate(final: str, character: str) -> tuple[str, str | None]:
    """Replace a subject `he` / `she` in the question sentence by the character's name (GSM-IC Table 10)."""
    fixed = re.sub(
        r"\b(does|did|is|was|has|will|can|should|would|could) (she|he)\b", rf"\1 {character}", final, count=1
    )
    fixed = re.sub(r"^(She|He)\b", character, fixed)
    pronoun = _PRONOUN_RE.search(fixed)
    note = None
    if pronoun:
        note = (
            f"The question still says {pronoun.group()!r}, which may now refer to {character} or to the added role; "
            "check that the problem is unambiguous."
        )
    return fixed, note


# --------------------------------------------------------------------------------------- database


def variants_for_database(
    engine: Engine, *, options: Options, data_sources: list[str] | None = None, limit: int | None = None
) -> list[CandidateRecord]:
    """Distractor candidates for the solvable problems in the database (those with a ground truth)."""
    rng = random.Random(options.seed)
    with read_session(engine) as session:
        query = select(Problem).where(Problem.ground_truth.is_not(None)).order_by(Problem.id)
        if data_sources:
            query = query.where(Problem.data_source.in_(data_sources))
        if limit is not None:
            query = query.limit(limit)
        problems = list(session.execute(query).scalars())
        # Imported distractors keep their numbers; generated ones count after them.
        imported: dict[int, int] = defaultdict(int)
        distractors = select(Candidate.problem_id, Candidate.provenance).where(
            Candidate.rewrite_type == RewriteType.distractor.value
        )
        rows = session.execute(distractors)
        for problem_id, provenance in rows:
            if (provenance or {}).get("generator") != GENERATOR:
                imported[problem_id] += 1
    records: list[CandidateRecord] = []
    for problem in problems:
        variants = make_variants(
            problem.question, solution=problem.solution, answer=problem.ground_truth, options=options, rng=rng
        )
        records.extend(
            candidate_record(problem, variant, k=imported[problem.id] + i, options=options)
            for i, variant in enumerate(variants, start=1)
        )
    return records


def candidate_record(problem: Problem, variant: Variant, *, k: int, options: Options) -> CandidateRecord:
    extra: dict[str, Any] = {"gsm_ic": {"fields": variant.gsm_ic_fields()}}
    if variant.ambiguity_note:
        extra["ambiguity_note"] = variant.ambiguity_note
    return CandidateRecord(
        data_id=str(DataId(problem.data_source, problem.position, RewriteType.distractor, k)),
        data_source=problem.data_source,
        problem_position=problem.position,
        rewrite_type=RewriteType.distractor,
        condition_index=k,
        rewritten_question=variant.new_question,
        rewritten_condition=variant.sentence,
        question=problem.question,
        ground_truth=problem.ground_truth,
        provenance={"generator": GENERATOR, "seed": options.seed, "role": options.role, "number": options.number},
        extra=extra,
        location=Location("distract", f"problem {problem.data_source} {problem.position}, variant {k}"),
    )


def as_import_part(records: list[CandidateRecord]) -> ImportPart:
    return ImportPart("distract", records)


def write_gsm_ic(records: list[CandidateRecord], out: Path) -> Path:
    """The variants as a GSM-IC JSON array (`out` is a file, or a directory for `GSM-IC_distract.json`),
    written by the exports' GSM-IC writer."""
    path = out / gsm_ic_export.GENERATED_FILE if out.suffix.lower() != ".json" else out
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        gsm_ic_export.gsm_ic_record(
            original_question=record.question or "",
            new_question=record.rewritten_question,
            answer=record.ground_truth,
            info=(record.extra or {})["gsm_ic"],
        )
        for record in records
    ]
    path.write_text(gsm_ic_export.dumps(rows), encoding="utf-8")
    return path
