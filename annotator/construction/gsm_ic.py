"""GSM-IC-style variants of solvable problems: one irrelevant sentence added before the question.

Following the GSM-IC paper's Appendix A (Shi et al., 2023): in-topic sentences (1(a): written by hand for
each problem there; here four templates about the countable things the problem itself names, e.g. "{role}
has {number} cherry pits at home.", labelled `in_topic`) and off-topic ones (the templates of its Table 9,
labelled `out_topic`); role names that overlap with the problem's character (`X's father`, `X's mother`,
`X's brother`, `X's sister`, `X's neighbor`) or do not (Ada, David, Emma, Jack, John, Mary, Max, Tom);
numbers in range (integers in [l/10, 10r], l and r the smallest and largest number in the problem and its
solution) or out of range (`a * 10^b` above 10r over three decades, or in [2, l/10) when l > 10^5). A
problem without a named character gets only non-overlapped roles, one naming no countable thing only
off-topic sentences; `summary` counts both. Where an overlapping role makes a pronoun in the
question ambiguous (their Table 10), a leading `he` / `she` of the question is replaced by the character's
name, as the GSM-IC authors did by hand; other pronouns are flagged for the human check.

The answer of a variant is the original answer; a `distractor` candidate's human check asks whether the
answer is unchanged and the problem unambiguous.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from annotator.database.engine import read_session
from annotator.database.models import Candidate, Problem
from annotator.database.vocabulary import DataId, RewriteType
from annotator.import_export.exports import gsm_ic as gsm_ic_export
from annotator.import_export.records import CandidateRecord, ImportPart, Location

TEMPLATES = (  # off-topic, GSM-IC Table 9
    "The shoe size of {role} is {number}.",
    "{role} is {number} years old.",
    "The height of {role} is {number} feet.",
    "{role} bought {number} tomatoes from the grocery store.",
    "{role} has read {number} books in the past year.",
)
# In-topic: about the things the problem counts ({unit}), without changing what it counts (GSM-IC 1(a)).
IN_TOPIC_TEMPLATES = (
    "{role} has {number} {unit} at home.",
    "{role} counted {number} {unit} last week.",
    "{role} wants to buy {number} {unit} next year.",
    "{role} saw {number} {unit} at the market yesterday.",
)
SENTENCE_KINDS = ("in_topic", "out_topic")
IN_TOPIC_NOTE = (
    "The added sentence is in topic: check that it does not change an amount the question counts or shares."
)
# Table 9's plural words and their singular, for the number 1 ("1 year", never "1 years").
_SINGULAR = (("years", "year"), ("feet", "foot"), ("tomatoes", "tomato"), ("books", "book"))
# Words that end a noun phrase after a number but are no countable thing to write an in-topic sentence about.
_NOT_UNITS = frozenset(
    """is was has does goes plus less times minutes hours seconds days weeks months years dollars cents percent
    miles inches feet yards meters pounds ounces gallons liters degrees points calories pairs sets packs dozens this
    its his""".split()
)
_FUNCTION_WORDS = frozenset("of the a an and or to in on for per each more than as at with by from".split())
_UNIT_RE = re.compile(r"(?<![\w.$])\d[\d,]*(?:\.\d+)? ((?:[a-z]+ ){0,2}?[a-z]+s)\b")
RELATIONS = ("father", "mother", "brother", "sister", "neighbor")
OTHER_NAMES = ("Ada", "David", "Emma", "Jack", "John", "Mary", "Max", "Tom")
ROLE_KINDS = ("overlapped", "nonoverlapped")
NUMBER_KINDS = ("in_range", "out_range")
GENERATOR = "distract"
# Capitalised words that are not a character's name.
# Capitalised words that are not a character's name (sentence openers, numbers, days, months, titles).
_NOT_NAMES = frozenset(
    """A An The If How What When Where Which Who Why Each Every In On At For After Before Then There This That These
    Those She He They It His Her Their Its We I You Our My Your Some All One Two Three Four Five Six Seven Eight Nine
    Ten Twenty Half Both Many Most Several Last Next During Today Yesterday Tomorrow Now Once Because Although Since
    While Of To From With By As Also Only Mr Mrs Ms Dr Uncle Aunt Grandma Grandpa Question But And So Let Find Compute
    Evaluate Determine Calculate Solve Show Prove Suppose Given Assume Monday Tuesday Wednesday Thursday Friday
    Saturday Sunday January February March April May June July August September October November December""".split()
)
_NUMBER_RE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'$])")
_PRONOUN_RE = re.compile(r"\b(she|he|her|his|him|they|them|their)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Options:
    per_problem: int = 4
    role: str = "both"  # overlapped / nonoverlapped / both
    number: str = "both"  # in_range / out_range / both
    topic: str = "both"  # in_topic / out_topic / both
    seed: int = 0

    def __post_init__(self) -> None:
        if self.per_problem < 1:
            raise ValueError("--per-problem must be at least 1")
        if self.role not in (*ROLE_KINDS, "both"):
            raise ValueError(f"--role must be overlapped, nonoverlapped or both, got {self.role!r}")
        if self.number not in (*NUMBER_KINDS, "both"):
            raise ValueError(f"--number must be in_range, out_range or both, got {self.number!r}")
        if self.topic not in (*SENTENCE_KINDS, "both"):
            raise ValueError(f"--topic must be in_topic, out_topic or both, got {self.topic!r}")


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
    """GSM-IC Appendix A 3(b): `a * 10^b` above 10r (a in 1-9, b over the three decades from 10r's up), or a
    number in [2, l/10) when l > 10^5."""
    if low > 1e5:
        return rng.randint(2, max(2, math.ceil(low / 10) - 1))
    first = max(0, math.floor(math.log10(10 * high)))
    return rng.choice([a * 10**b for b in range(first, first + 3) for a in range(1, 10) if a * 10**b > 10 * high])


def units_in(question: str) -> list[str]:
    """The countable things the problem names after a number ("80 cherry pits" -> "cherry pits"), in order."""
    units: list[str] = []
    for phrase in _UNIT_RE.findall(question):
        words = phrase.split()
        if words[-1] in _NOT_UNITS or len(words[-1]) < 4 or _FUNCTION_WORDS.intersection(words):
            continue
        if phrase not in units:
            units.append(phrase)
    return units


def main_character(question: str) -> str | None:
    """The problem's character: the most mentioned capitalised name (first mentioned on a tie), if any.

    A name counts when it is not a common capitalised word (`_NOT_NAMES`) and not part of a place or brand
    ("Texas BBQ", "in Paris"); a word that opens a sentence counts when it is followed by a lower-case word
    that is not a function word ("Natalia sold ...", not "Lunch at ...") or written as a possessive
    ("Jayson's"), as names are.
    """
    places: set[str] = set()
    for phrase in re.findall(r"\b[A-Z][\w']*(?: [A-Z][\w']*)+", question):
        words = [w.removesuffix("'s") for w in phrase.split()]
        while words and words[0] in _NOT_NAMES:  # "When Jayson", "Uncle Jude": an opener or title, then a name
            words.pop(0)
        if len(words) > 1:
            places.update(words)
    places.update(re.findall(r"\b(?:at|in) ([A-Z][a-z]+)\b(?!')", question))
    counts: Counter[str] = Counter()
    for match in re.finditer(r"\b([A-Z][a-z]+)('s)?\b(?:\s+([a-z]+))?", question):
        word, possessive, following = match.groups()
        if word in _NOT_NAMES or word in places:
            continue
        opens_sentence = re.search(r"(?:^|[.!?]\s+)$", question[: match.start()]) is not None
        # "Natalia sold": a name then a verb; "Lunch at ...": a common noun opening the sentence.
        if opens_sentence and not possessive and (following is None or following in _FUNCTION_WORDS):
            continue
        counts[word] += 1
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
        template = self.sentence_template
        if self.number == "1":
            for plural, singular in _SINGULAR:
                template = template.replace(f"{{number}} {plural}", f"{{number}} {singular}")
        return template.format(role=self.role, number=self.number)

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
    """`options.per_problem` distinct variants of one solvable problem, the (topic, role, number) kinds
    balanced: each combination once, in random order, before any comes again."""
    low, high = number_range(question, solution, None if answer is None else str(answer))
    character, units = main_character(question), units_in(question)
    roles = [k for k in ROLE_KINDS if options.role in (k, "both") and (k == "nonoverlapped" or character)]
    topics = [k for k in SENTENCE_KINDS if options.topic in (k, "both") and (k == "out_topic" or units)]
    numbers = [k for k in NUMBER_KINDS if options.number in (k, "both")]
    # Nothing to overlap with, or nothing in topic to talk about: the other kind instead.
    kinds = list(itertools.product(topics or ["out_topic"], roles or ["nonoverlapped"], numbers))
    rng.shuffle(kinds)
    others = [name for name in OTHER_NAMES if not re.search(rf"\b{name}\b", question)] or list(OTHER_NAMES)
    head, final = split_question(question)
    variants: list[Variant] = []
    seen: set[str] = set()
    for attempt in range(options.per_problem * 20):
        if len(variants) == options.per_problem:
            break
        topic, role_label, number_label = kinds[attempt % len(kinds)]
        role = f"{character}'s {rng.choice(RELATIONS)}" if role_label == "overlapped" else rng.choice(others)
        value = in_range_number(low, high, rng) if number_label == "in_range" else out_of_range_number(low, high, rng)
        if topic == "in_topic":
            template = rng.choice(IN_TOPIC_TEMPLATES).replace("{unit}", rng.choice(units))
            value = max(value, 2)  # the unit is plural
        else:
            template = rng.choice(TEMPLATES)
        variant = Variant("", role, str(value), template, role_label, number_label, sentence_label=topic)
        if variant.sentence in seen:
            continue
        seen.add(variant.sentence)
        asked, note = final, None
        if role_label == "overlapped":
            asked, note = _disambiguate(final, character or "")
        variant.new_question = f"{head} {variant.sentence} {asked}" if head else f"{variant.sentence} {asked}"
        if topic == "in_topic":  # GSM-IC 1(a): the authors made sure such a sentence changes no shared amount
            note = " ".join(filter(None, [note, IN_TOPIC_NOTE]))
        variant.ambiguity_note = note
        variants.append(variant)
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
        provenance={
            "generator": GENERATOR, "seed": options.seed, "role": options.role, "number": options.number,
            "topic": options.topic,
        },
        extra=extra,
        location=Location("distract", f"problem {problem.data_source} {problem.position}, variant {k}"),
    )


def summary(records: list[CandidateRecord]) -> dict[str, int]:
    """How many problems the variants cover, and how many of them got no overlapped role (no named character
    found) and no in-topic sentence (no countable thing found)."""
    questions = {(r.data_source, r.problem_position): r.question or "" for r in records}.values()
    return {
        "problems": len(questions),
        "without_character": sum(main_character(q) is None for q in questions),
        "without_in_topic": sum(not units_in(q) for q in questions),
    }


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
