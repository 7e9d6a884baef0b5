"""TreeCut: answerable / unanswerable word-problem pairs from random trees, and an exact solvability check.

The generator follows Algorithms 1 and 2 of the TreeCut paper's Appendix A (Ouyang 2025): sample a price in
[5, 15] for each variable, build a tree whose path root -> x_1 -> ... -> x_ansDepth ends at the questioned
variable, attach the remaining variables to random nodes (the root included), collect the edges breadth
first, give each edge a linear formula with coefficients in {-3..3} \\ {0} (an edge from the root is a
given price), order the formulas (forward / backward / random) and render them with the Appendix A
templates. The unanswerable counterpart is the same problem without the formula of the edge
(x_{ansDepth-cutDepth-1}, x_{ansDepth-cutDepth}).

The check does not trust the generator: it parses the problem text back into linear equations (every
template, simple and composite names) and walks the equation graph, writing each variable of a connected
component as an affine function `(P + Q t) / D` of one free parameter `t` with integer P, Q, D; every
equation that is not a tree edge pins `t` (or is redundant, or contradicts). The value of the questioned
variable is then a `fractions.Fraction`, or undetermined. The work is linear in the number of formulas.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, NamedTuple

ORDERS = ("forward", "backward", "random")
MIN_VALUE, MAX_VALUE = 5, 15
COEFFICIENTS = (-3, -2, -1, 1, 2, 3)
ROOT = -1


# ------------------------------------------------------------------------------------------- themes


@dataclass(frozen=True)
class Theme:
    """Item names of a theme: (singular, plural, other plural spellings seen in the wild) and places."""

    name: str
    items: tuple[tuple[str, str, tuple[str, ...]], ...]
    places: tuple[str, ...]
    article: str = "a"


THEMES: dict[str, Theme] = {
    "food": Theme(
        name="food",
        items=(
            ("BLT sandwich", "BLT sandwiches", ()),
            ("Caesar salad", "Caesar salads", ()),
            ("Cobb salad", "Cobb salads", ()),
            ("Greek salad", "Greek salads", ()),
            ("burger", "burgers", ()),
            # The reference generator writes "cream brulees"; accept it when reading.
            ("creme brulee", "creme brulees", ("cream brulees",)),
            ("fruit tart", "fruit tarts", ()),
            ("grilled cheese sandwich", "grilled cheese sandwiches", ()),
            ("lasagna", "lasagnas", ()),
            ("piece of cheese cake", "pieces of cheese cake", ()),
            ("piece of fried chicken", "pieces of fried chicken", ()),
            ("pie", "pies", ()),
            ("pizza", "pizzas", ()),
            ("scrambled egg", "scrambled eggs", ()),
        ),
        places=("Bistro Nice", "Taste Good Cuisine", "Mike's Place", "Texas BBQ", "Urban Plate"),
    )
}


@dataclass(frozen=True)
class Name:
    """One variable's name: its singular and plural phrase, e.g. "burger at Texas BBQ"."""

    singular: str
    plural: str


def theme_names(theme: Theme, *, composite: bool) -> list[Name]:
    key = (theme.name, composite)
    names = _NAMES.get(key)
    if names is None:
        names = _NAMES[key] = _theme_names(theme, composite=composite)
    return names


_NAMES: dict[tuple[str, bool], list[Name]] = {}


def _theme_names(theme: Theme, *, composite: bool) -> list[Name]:
    if composite:
        return [Name(f"{s} at {place}", f"{p} at {place}") for s, p, _ in theme.items for place in theme.places]
    return [Name(s, p) for s, p, _ in theme.items]


def get_theme(name: str) -> Theme:
    try:
        return THEMES[name]
    except KeyError:
        raise ValueError(f"unknown theme {name!r}; choose one of {', '.join(THEMES)}") from None


# -------------------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class Params:
    """Generation parameters, with the paper's names in `as_dict` (numVars, ansDepth, ...)."""

    num_vars: int
    ans_depth: int
    cut_depth: int
    composite_name: bool = True
    order: str = "random"
    theme: str = "food"

    def __post_init__(self) -> None:
        if self.ans_depth < 2:
            raise ValueError(f"ansDepth must be at least 2, got {self.ans_depth}")
        if self.num_vars < self.ans_depth:
            raise ValueError(f"numVars ({self.num_vars}) must be at least ansDepth ({self.ans_depth})")
        if not 1 <= self.cut_depth < self.ans_depth:
            raise ValueError(f"cutDepth must satisfy 1 <= cutDepth < ansDepth ({self.ans_depth}), got {self.cut_depth}")
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {self.order!r}")
        theme = get_theme(self.theme)
        available = len(theme_names(theme, composite=self.composite_name))
        if self.num_vars > available:
            hint = "" if self.composite_name else "; composite names (--composite-name) give more"
            raise ValueError(
                f"theme {self.theme!r} has {available} item names, fewer than numVars {self.num_vars}{hint}"
            )

    def as_dict(self) -> dict[str, Any]:
        return {
            "theme": self.theme,
            "compositeName": self.composite_name,
            "numVars": self.num_vars,
            "ansDepth": self.ans_depth,
            "cutDepth": self.cut_depth,
            "order": self.order,
        }

    def file_name(self, *, unanswerable: bool, count: int) -> str:
        """The reference generator's file name, e.g. `qa_theme-food_compositeName_True_numVars-4_..._REP-500.jsonl`."""
        cut = f"_cutDepth-{self.cut_depth}" if unanswerable else ""
        return (
            f"qa_theme-{self.theme}_compositeName_{self.composite_name}_numVars-{self.num_vars}_ansDepth-{self.ans_depth}"
            f"_order-{self.order}_hallu-{unanswerable}{cut}_REP-{count}.jsonl"
        )


FILE_NAME_RE = re.compile(
    r"^qa_theme-(?P<theme>[^_]+)_compositeName_(?P<composite>True|False)_numVars-(?P<num_vars>\d+)"
    r"_ansDepth-(?P<ans_depth>\d+)_order-(?P<order>forward|backward|random)_hallu-(?P<hallu>True|False)"
    r"(?:_cutDepth-(?P<cut_depth>\d+))?_REP-(?P<count>\d+)\.jsonl$"
)


def parse_file_name(name: str) -> dict[str, Any] | None:
    """The parameters in a TreeCut file name, or None if it is not named like one."""
    match = FILE_NAME_RE.match(name)
    if not match:
        return None
    return {
        "theme": match["theme"],
        "compositeName": match["composite"] == "True",
        "numVars": int(match["num_vars"]),
        "ansDepth": int(match["ans_depth"]),
        "order": match["order"],
        "hallu": match["hallu"] == "True",
        "cutDepth": int(match["cut_depth"]) if match["cut_depth"] else None,
        "REP": int(match["count"]),
    }


# ---------------------------------------------------------------------------------------- rendering


def _quantity(n: int, name: Name, article: str) -> str:
    return f"{article} {name.singular}" if n == 1 else f"{n} {name.plural}"


def _verb(n: int) -> str:
    return "costs" if n == 1 else "cost"


def _amount(c: int) -> str:
    return "a dollar" if c == 1 else f"{c} dollars"


def _capital(text: str) -> str:
    return text[0].upper() + text[1:]


def _lower(sentence: str) -> str:
    """A sentence as a clause: first letter lower-cased, final period dropped."""
    return sentence[0].lower() + sentence[1:-1]


def render_formula(
    a: int, i: int, b: int, j: int, rhs: int, names: list[Name], rng: random.Random, article: str = "a"
) -> str:
    """The sentence of `a*x_i + b*x_j = rhs` (j = ROOT for a given price `a*x_i = rhs`), Appendix A templates."""
    if j == ROOT:
        return _capital(f"{_quantity(a, names[i], article)} {_verb(a)} {_amount(rhs)}.")
    if a < 0 and b < 0:
        a, b, rhs = -a, -b, -rhs
    if a > 0 and b > 0:
        return _capital(f"{_quantity(a, names[i], article)} and {_quantity(b, names[j], article)} cost {_amount(rhs)}.")
    # p*x_pos - q*x_neg = rhs with p, q > 0
    if a > 0:
        p, pos, q, neg = a, i, -b, j
    else:
        p, pos, q, neg = b, j, -a, i
    more, less = _quantity(p, names[pos], article), _quantity(q, names[neg], article)
    if rhs == 0:
        if rng.random() < 0.5:
            more, less = less, more
        return f"The price of {more} is the same as that of {less}."
    if rhs < 0:
        # q*x_neg costs |rhs| more than p*x_pos
        more, less, p, q, rhs = less, more, q, p, -rhs
    if rng.random() < 0.5:
        return _capital(f"{more} {_verb(p)} {_amount(rhs)} more than {less}.")
    return _capital(f"{less} {_verb(q)} {_amount(rhs)} less than {more}.")


# --------------------------------------------------------------------------------------- generation


@dataclass
class Pair:
    """An answerable problem and its unanswerable counterpart, generated from the same tree."""

    params: Params
    index: int
    problem: str
    answer: str
    proof: str
    cut_problem: str
    cut_proof: str
    cut_sentence: str
    cut_sentence_index: int  # 0-based index of the cut formula among the answerable problem's sentences
    question_name: str
    undetermined: list[str]  # names of the variables the cut leaves undetermined, breadth first
    checks: dict[str, Verdict] = field(default_factory=dict)

    def answerable_record(self) -> dict[str, str]:
        return {"problem": self.problem, "answer": self.answer, "proof": self.proof}

    def unanswerable_record(self) -> dict[str, str]:
        return {"problem": self.cut_problem, "answer": "unknown", "proof": self.cut_proof}


def generate_pair(params: Params, rng: random.Random, *, index: int = 0, check: bool = True) -> Pair:
    """One pair (Algorithms 1 and 2). With `check`, both problems go through the exact check, whose
    verdicts must be the answer and "unsolvable"; a disagreement is a bug and raises RuntimeError."""
    n, depth = params.num_vars, params.ans_depth
    theme = get_theme(params.theme)
    article = theme.article
    rand = rng.random
    # (i) values
    values = [MIN_VALUE + int(rand() * (MAX_VALUE - MIN_VALUE + 1)) for _ in range(n)]
    # (ii) the tree: root -> x_0 -> ... -> x_{depth-1} (the questioned variable), then random parents
    parent = [ROOT] + list(range(depth - 1))
    children: dict[int, list[int]] = {ROOT: [0]}
    for i in range(1, depth):
        children[i - 1] = [i]
    for i in range(depth, n):
        p = int(rand() * (i + 1)) - 1  # any node already in the tree, the root included
        parent.append(p)
        children.setdefault(p, []).append(i)
    # (iii) edges breadth first (Algorithm 2)
    edges: list[tuple[int, int]] = []
    queue = [ROOT]
    for node in queue:
        for child in children.get(node, ()):
            edges.append((node, child))
            queue.append(child)
    # (iv) the cut edge, 0-based: the edge into x_{depth-cut_depth-1}
    cut_child = depth - params.cut_depth - 1
    cut_edge = (parent[cut_child], cut_child)
    # (v) a formula per edge
    names = rng.sample(theme_names(theme, composite=params.composite_name), n)
    sentence_of: dict[tuple[int, int], str] = {}
    for edge in edges:
        parent_node, child = edge
        if parent_node == ROOT:
            sentence_of[edge] = render_formula(1, child, 0, ROOT, values[child], names, rng, article)
        else:
            a, b = COEFFICIENTS[int(rand() * 6)], COEFFICIENTS[int(rand() * 6)]
            rhs = a * values[parent_node] + b * values[child]
            sentence_of[edge] = render_formula(a, parent_node, b, child, rhs, names, rng, article)
    # (vi) order
    ordered = list(edges)
    if params.order == "backward":
        ordered.reverse()
    elif params.order == "random":
        rng.shuffle(ordered)
    sentences = [sentence_of[edge] for edge in ordered]
    q = depth - 1
    question = f" Question: how much does {article} {names[q].singular} cost?"
    cut_index = ordered.index(cut_edge)
    cut_sentences = sentences[:cut_index] + sentences[cut_index + 1 :]

    # Proof of the answerable problem: the path root -> x_q.
    path = [sentence_of[(parent[i], i)] for i in range(depth)]
    steps = [f"It is given as a fact that {_lower(path[0])}."]
    for i in range(1, depth):
        steps.append(
            f"Combine with the fact that {_lower(path[i])}, we get {article} {names[i].singular} costs "
            f"{_amount(values[i])}."
        )
    # Proof of the unanswerable one: all that is known about the cut-off subtree.
    sub_nodes = [cut_child]
    sub_edges: list[str] = []
    for node in sub_nodes:
        for child in children.get(node, ()):
            sub_nodes.append(child)
            sub_edges.append(_lower(sentence_of[(node, child)]))
    undetermined = [names[i].singular for i in sub_nodes]
    cut_proof = (
        f"All we know about the prices of {', '.join(undetermined)} are: {', '.join(sub_edges)}.\n"
        f"There are {len(sub_nodes)} variables but only {len(sub_edges)} linear formulas, so we cannot calculate "
        f"the price of {names[q].singular}."
    )
    pair = Pair(
        params=params,
        index=index,
        problem=" ".join(sentences) + question,
        answer=str(values[q]),
        proof=" ".join(steps),
        cut_problem=" ".join(cut_sentences) + question,
        cut_proof=cut_proof,
        cut_sentence=sentence_of[cut_edge],
        cut_sentence_index=cut_index,
        question_name=names[q].singular,
        undetermined=undetermined,
    )
    if check:
        cache: dict[str, Equation] = {}
        answerable = check_problem(pair.problem, theme=params.theme, cache=cache)
        unanswerable = check_problem(pair.cut_problem, theme=params.theme, cache=cache)
        if answerable.value != values[q] or answerable.status != "solvable" or unanswerable.status != "unsolvable":
            raise RuntimeError(
                f"TreeCut check disagrees with the generator on pair {index}: {answerable}, {unanswerable}"
            )
        pair.checks = {"answerable": answerable, "unanswerable": unanswerable}
    return pair


def generate_pairs(params: Params, *, count: int, seed: int, check: bool = True) -> Iterator[Pair]:
    """`count` pairs, the same ones for the same parameters and seed."""
    rng = random.Random(seed)
    for index in range(count):
        yield generate_pair(params, rng, index=index, check=check)


# ------------------------------------------------------------------------------------------ parsing


class TreeCutParseError(ValueError):
    """A sentence that is not one of the TreeCut templates, or names an item the theme does not have."""

    def __init__(self, message: str, *, sentence: str | None = None) -> None:
        self.sentence = sentence
        super().__init__(message if sentence is None else f"{message}: {sentence!r}")


class Equation(NamedTuple):
    """`sum(coef * variable) = rhs` over variable names (singular phrases)."""

    terms: tuple[tuple[int, str], ...]
    rhs: int
    template: str


TEMPLATE_NAMES = ("difference", "same", "sum", "price")


class _Vocabulary:
    """Every name phrase of a theme -> (variable, is plural), composite and simple."""

    def __init__(self, theme: Theme) -> None:
        self.theme = theme
        self.lookup: dict[str, tuple[str, bool]] = {}
        for singular, plural, aliases in theme.items:
            forms = [(singular, False), (plural, True), *((alias, True) for alias in aliases)]
            for form, is_plural in forms:
                self.lookup[form] = (singular, is_plural)
                for place in theme.places:
                    self.lookup[f"{form} at {place}"] = (f"{singular} at {place}", is_plural)
        self.articles = {theme.article, _capital(theme.article)}
        # Whole item phrases with the quantities the generator uses, for the fast path of `parse_sentence`.
        self.phrases: dict[str, tuple[int, str]] = {}
        for name, (variable, is_plural) in self.lookup.items():
            quantities = range(2, 10) if is_plural else self.articles
            for quantity in quantities:
                self.phrases[f"{quantity} {name}"] = (1 if isinstance(quantity, str) else quantity, variable)

    def term(self, phrase: str, sentence: str) -> tuple[int, str]:
        """`a burger at Texas BBQ` -> (1, "burger at Texas BBQ"); `3 pies` -> (3, "pie")."""
        quantity, _, name = phrase.partition(" ")
        entry = self.lookup.get(name)
        if entry is None:
            raise _NameError(f"unknown item name {name!r} for theme {self.theme.name!r}", sentence=sentence)
        variable, is_plural = entry
        if quantity in self.articles:
            n = 1
        elif _is_number(quantity) and quantity != "1":
            n = int(quantity)
        else:
            raise TreeCutParseError(
                f"{quantity!r} is not a quantity (a, {self.theme.article!r} or 2, 3, ...)", sentence=sentence
            )
        if is_plural != (n != 1):
            raise TreeCutParseError(f"quantity {quantity!r} does not agree with {name!r}", sentence=sentence)
        return n, variable


class _NameError(TreeCutParseError):
    """The sentence has a template's shape but names an unknown item (another template may still fit)."""


_VOCABULARIES: dict[str, _Vocabulary] = {}


def _vocabulary(theme: str) -> _Vocabulary:
    vocab = _VOCABULARIES.get(theme)
    if vocab is None:
        vocab = _VOCABULARIES[theme] = _Vocabulary(get_theme(theme))
    return vocab


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit() and (text == "0" or text[0] != "0")


def _split_amount(text: str) -> tuple[str, int] | None:
    """`... 12 dollars` / `... a dollar` -> (the text before, 12 / 1)."""
    if text.endswith(" a dollar"):
        return text[:-9], 1
    rest, _, unit = text.rpartition(" ")
    if unit != "dollars":
        return None
    rest, _, number = rest.rpartition(" ")
    if not _is_number(number) or number == "1":
        return None
    return rest, int(number)


def _split_verb(text: str) -> tuple[str, str] | None:
    """`<item> costs` -> (item, "costs")."""
    if text.endswith(" costs"):
        return text[:-6], "costs"
    if text.endswith(" cost"):
        return text[:-5], "cost"
    return None


def parse_sentence(sentence: str, *, theme: str = "food") -> Equation:
    """One condition sentence as a linear equation; TreeCutParseError if no template fits.

    The templates (Appendix A): `X costs N dollars.`, `X and Y cost N dollars.`, `X costs N dollars more /
    less than Y.`, `The price of X is the same as that of Y.`, where X and Y are `a <item>` or `k <items>`.
    Plain string splitting, every piece checked: several times faster than backtracking regular expressions.
    """
    vocab = _vocabulary(theme)
    equation = _parse_common(sentence, vocab.phrases)
    if equation is not None:
        return equation
    if not sentence.endswith(".") or sentence.endswith(".."):
        raise TreeCutParseError("does not end with a single period", sentence=sentence)
    body = sentence[:-1]
    name_error: _NameError | None = None
    for template in _candidate_templates(body):
        try:
            equation = _parse_as(template, body, vocab, sentence)
        except _NameError as exc:
            name_error = name_error or exc
            continue
        if equation is not None:
            return equation
    if name_error is not None:
        raise name_error
    raise TreeCutParseError("does not match any TreeCut template", sentence=sentence)


def _parse_common(sentence: str, phrases: dict[str, tuple[int, str]]) -> Equation | None:
    """The templates with the quantities the generator writes (a / an / 2-9), by dictionary look-ups.

    Returns None for anything else; the general path then parses the sentence or says why it cannot.
    """
    if sentence[-1:] != ".":
        return None
    body = sentence[:-1]
    if " than " in body:
        left, _, right = body.partition(" than ")
        second = phrases.get(right)
        direction = left[-5:]
        if second is None or direction not in (" more", " less"):
            return None
        amount = _split_amount(left[:-5])
        if amount is None:
            return None
        rest, value = amount
        if rest.endswith(" costs"):
            first = phrases.get(rest[:-6])
            if first is None or first[0] != 1:
                return None
        elif rest.endswith(" cost"):
            first = phrases.get(rest[:-5])
            if first is None or first[0] == 1:
                return None
        else:
            return None
        return Equation(
            ((first[0], first[1]), (-second[0], second[1])), value if direction == " more" else -value, "difference"
        )
    if body.startswith("The price of "):
        left, sep, right = body[13:].partition(" is the same as that of ")
        first, second = phrases.get(left), phrases.get(right)
        if not sep or first is None or second is None:
            return None
        return Equation(((first[0], first[1]), (-second[0], second[1])), 0, "same")
    amount = _split_amount(body)
    if amount is None:
        return None
    rest, value = amount
    if rest.endswith(" costs"):
        first = phrases.get(rest[:-6])
        if first is None or first[0] != 1:
            return None
        return Equation(((1, first[1]),), value, "price")
    if not rest.endswith(" cost"):
        return None
    items = rest[:-5]
    first = phrases.get(items)
    if first is not None:
        return None if first[0] == 1 else Equation((first,), value, "price")
    left, sep, right = items.partition(" and ")
    first, second = phrases.get(left), phrases.get(right)
    if not sep or first is None or second is None:
        return None
    return Equation((first, second), value, "sum")


def _candidate_templates(body: str) -> tuple[str, ...]:
    # The keywords point to one template; the rest are tried only if it does not fit.
    if " than " in body:
        return ("difference", "sum", "price")
    if body.startswith("The price of "):
        return ("same",)
    if " and " in body:
        return ("sum", "price")
    return ("price",)


def _parse_as(template: str, body: str, vocab: _Vocabulary, sentence: str) -> Equation | None:
    if template == "same":
        left, sep, right = body[len("The price of ") :].partition(" is the same as that of ")
        if not sep:
            return None
        (a, x), (b, y) = vocab.term(left, sentence), vocab.term(right, sentence)
        return Equation(((a, x), (-b, y)), 0, template)
    if template == "difference":
        left, sep, right = body.partition(" than ")
        direction = left[-4:]
        if not sep or direction not in ("more", "less") or left[-5] != " ":
            return None
        amount = _split_amount(left[:-5])
        verb = amount and _split_verb(amount[0])
        if not verb:
            return None
        (a, x), (b, y) = vocab.term(verb[0], sentence), vocab.term(right, sentence)
        _check_verb(a, verb[1], sentence)
        return Equation(((a, x), (-b, y)), amount[1] if direction == "more" else -amount[1], template)
    amount = _split_amount(body)
    verb = amount and _split_verb(amount[0])
    if not verb:
        return None
    items, word = verb
    if template == "price":
        a, x = vocab.term(items, sentence)
        _check_verb(a, word, sentence)
        return Equation(((a, x),), amount[1], template)
    if word != "cost":
        return None
    # `X and Y`: try each " and " (an item name may contain one).
    start = items.find(" and ")
    first_error: _NameError | None = None
    while start != -1:
        try:
            (a, x), (b, y) = vocab.term(items[:start], sentence), vocab.term(items[start + 5 :], sentence)
            return Equation(((a, x), (b, y)), amount[1], template)
        except _NameError as exc:
            first_error = first_error or exc
        start = items.find(" and ", start + 1)
    if first_error is not None:
        raise first_error
    return None


def _check_verb(n: int, verb: str, sentence: str) -> None:
    if (verb == "costs") != (n == 1):
        raise TreeCutParseError(f"{verb!r} does not agree with the quantity {n}", sentence=sentence)


def split_problem(text: str) -> tuple[list[str], str]:
    """The condition sentences and the questioned name of a TreeCut problem text."""
    body, sep, question = text.rpartition("Question: how much does ")
    article, _, name = question.partition(" ")
    if not sep or not name.endswith(" cost?") or article not in ("a", "an") or (body and not body.endswith(" ")):
        raise TreeCutParseError(
            "has no question of the form 'Question: how much does a ... cost?'", sentence=text[-80:]
        )
    name = name[:-6]
    body = body[:-1]
    if not body:
        return [], name
    if not body.endswith("."):
        raise TreeCutParseError("the conditions do not end with a period", sentence=body[-80:])
    parts = body[:-1].split(". ")
    return [part + "." for part in parts], name


@dataclass
class ParsedProblem:
    equations: list[Equation]
    question: str  # the questioned variable (singular phrase)
    sentences: list[str]


def parse_problem(text: str, *, theme: str = "food", cache: dict[str, Equation] | None = None) -> ParsedProblem:
    sentences, name = split_problem(text)
    vocab = _vocabulary(theme)
    entry = vocab.lookup.get(name)
    if entry is None or entry[1]:
        raise TreeCutParseError(f"unknown item name {name!r} in the question for theme {theme!r}", sentence=text[-80:])
    equations = []
    phrases = vocab.phrases
    for sentence in sentences:
        equation = cache.get(sentence) if cache is not None else None
        if equation is None:
            equation = _parse_common(sentence, phrases) or parse_sentence(sentence, theme=theme)
            if cache is not None:
                cache[sentence] = equation
        equations.append(equation)
    return ParsedProblem(equations, entry[0], sentences)


# ----------------------------------------------------------------------------------------- checking


@dataclass
class Verdict:
    """The exact check's result: `solvable` with a value, `unsolvable`, or `contradictory`."""

    status: str
    value: Fraction | None = None
    question: str = ""
    undetermined: list[str] = field(default_factory=list)  # the questioned variable's component, when free
    component_formulas: int = 0  # formulas within that component
    detail: str = ""

    @property
    def label(self) -> str:
        """`solvable: 12`, `unsolvable` or `contradictory`, as the annotate page shows it."""
        return f"solvable: {format_value(self.value)}" if self.status == "solvable" else self.status

    def as_check(self) -> dict[str, str]:
        return {"name": "TreeCut exact check", "verdict": self.label, "detail": self.detail}

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["value"] = None if self.value is None else format_value(self.value)
        return data


def format_value(value: Fraction | None) -> str:
    if value is None:
        return "undetermined"
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def solve(equations: list[Equation], question: str) -> Verdict:
    """Whether `question` is determined by the equations, and its value; linear in the number of equations.

    Each connected component of the graph whose edges are two-variable equations is walked breadth first
    from one variable, set to the free parameter t: every variable becomes `(P + Q t) / D` (integers).
    Every equation not used as a tree edge (a given price, a second edge closing a cycle) becomes
    `alpha + beta t = gamma`: it fixes t when beta != 0, and is redundant or contradictory otherwise.
    """
    adjacency: dict[str, list[int]] = {}
    for index, equation in enumerate(equations):
        for _, variable in equation.terms:
            adjacency.setdefault(variable, []).append(index)
    affine: dict[str, tuple[int, int, int]] = {}  # variable -> (P, Q, D): value = (P + Q t) / D
    component_of: dict[str, int] = {}
    pinned: dict[int, tuple[int, int] | None] = {}  # component -> its t as (numerator, denominator), None: free
    used = [False] * len(equations)
    components: list[tuple[list[str], list[int]]] = []
    contradiction = ""
    for start in adjacency:
        if start in affine:
            continue
        comp = len(components)
        affine[start] = (0, 1, 1)
        component_of[start] = comp
        members, constraints = [start], []
        for variable in members:
            for index in adjacency[variable]:
                if used[index]:
                    continue
                used[index] = True
                terms = equations[index].terms
                if len(terms) == 2 and terms[0][1] != terms[1][1]:
                    (a, u), (b, w) = terms if terms[0][1] == variable else (terms[1], terms[0])
                    if w not in affine:
                        # a*u + b*w = c  ->  w = (c - a*u) / b
                        p, q, d = affine[u]
                        affine[w] = (equations[index].rhs * d - a * p, -a * q, b * d)
                        component_of[w] = comp
                        members.append(w)
                        continue
                constraints.append(index)
        t: tuple[int, int] | None = None  # exact rational (numerator, denominator), compared by cross-multiplying
        for index in constraints:
            alpha, beta, gamma = _linear_in_t(equations[index], affine)
            if beta == 0:
                if alpha != gamma:
                    contradiction = contradiction or f"the formula {index + 1} contradicts the others"
                continue
            if t is None:
                t = (gamma - alpha, beta)
            elif t[0] * beta != (gamma - alpha) * t[1]:
                contradiction = contradiction or f"the formula {index + 1} contradicts the others"
        pinned[comp] = t
        components.append((members, constraints))
    if contradiction:
        return Verdict(
            "contradictory", question=question, detail=f"The formulas have no common solution: {contradiction}."
        )
    if question not in affine:
        return Verdict(
            "unsolvable",
            question=question,
            undetermined=[question],
            detail=f"No formula mentions {question}, so its price is undetermined.",
        )
    comp = component_of[question]
    p, q, d = affine[question]
    t = pinned[comp]
    if q == 0 or t is not None:
        # (p + q * tn / td) / d, one exact Fraction
        value = Fraction(p, d) if q == 0 or t is None else Fraction(p * t[1] + q * t[0], d * t[1])
        return Verdict(
            "solvable", value=value, question=question, detail=f"The price of {question} is {format_value(value)}."
        )
    members, constraints = components[comp]
    formulas = len(members) - 1 + len(constraints)
    undetermined = [m for m in members if affine[m][1] != 0]
    return Verdict(
        "unsolvable",
        question=question,
        undetermined=undetermined,
        component_formulas=formulas,
        detail=(
            f"{_count(len(members), 'variable')} ({', '.join(members)}) are linked by only "
            f"{_count(formulas, 'linear formula')}, none of which gives a price, so {question} can take any value."
        ),
    )


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _linear_in_t(equation: Equation, affine: dict[str, tuple[int, int, int]]) -> tuple[int, int, int]:
    """`sum(a * (P + Q t) / D) = rhs` as integers `alpha + beta t = gamma` (multiplied by all D)."""
    alpha, beta, denominator = 0, 0, 1
    for a, variable in equation.terms:
        p, q, d = affine[variable]
        # alpha/denominator + a*(p + q t)/d, over the common denominator denominator*d
        alpha, beta, denominator = alpha * d + a * p * denominator, beta * d + a * q * denominator, denominator * d
    return alpha, beta, equation.rhs * denominator


def check_problem(text: str, *, theme: str = "food", cache: dict[str, Equation] | None = None) -> Verdict:
    """Parse a TreeCut problem and decide exactly whether its question is determined."""
    parsed = parse_problem(text, theme=theme, cache=cache)
    return solve(parsed.equations, parsed.question)


def answer_agrees(verdict: Verdict, answer: str) -> bool:
    """Whether a stated answer ("12" or "unknown") is the one the check computes."""
    if answer.strip().lower() == "unknown":
        return verdict.status == "unsolvable"
    if verdict.status != "solvable":
        return False
    try:
        return Fraction(answer.strip()) == verdict.value
    except (ValueError, ZeroDivisionError):
        return False


def unsolvable_reason(verdict: Verdict, *, cut_sentence: str | None = None) -> str:
    """Why an unsolvable TreeCut problem is unsolvable, in the annotators' words."""
    if verdict.status == "contradictory":
        return verdict.detail
    if verdict.status != "unsolvable":
        return f"The exact check finds the problem solvable ({verdict.label})."
    n = len(verdict.undetermined)
    names = ", ".join(verdict.undetermined)
    lead = f'Without "{cut_sentence}", the' if cut_sentence else "The"
    if n <= 1:
        return f"{lead} formulas never determine the price of {verdict.question}."
    return (
        f"{lead} remaining formulas leave {_count(n, 'variable')} undetermined ({names}): they are linked by only "
        f"{_count(verdict.component_formulas, 'linear formula')} and none of them has a given price, so the price of "
        f"{verdict.question} cannot be calculated."
    )


def write_pairs(pairs: list[Pair], params: Params, out: Path, *, seed: int | None = None) -> tuple[Path, Path]:
    """The answerable and the unanswerable JSONL file of `pairs` in directory `out`, named like the reference's."""
    out.mkdir(parents=True, exist_ok=True)
    answerable = out / params.file_name(unanswerable=False, count=len(pairs))
    unanswerable = out / params.file_name(unanswerable=True, count=len(pairs))
    answerable.write_bytes("".join(json.dumps(p.answerable_record()) + "\n" for p in pairs).encode("utf-8"))
    unanswerable.write_bytes("".join(json.dumps(p.unanswerable_record()) + "\n" for p in pairs).encode("utf-8"))
    if seed is not None:
        # TreeCut records carry no metadata; the seed goes beside them, where importing the files finds it.
        meta = {"generator": "annotator treecut", **params.as_dict(), "count": len(pairs), "seed": seed}
        generation_file(answerable).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return answerable, unanswerable


def generation_file(answerable: Path) -> Path:
    """Where `write_pairs` notes the seed of an answerable file and its counterpart."""
    return answerable.with_name(answerable.name.removesuffix(".jsonl") + ".generation.json")
