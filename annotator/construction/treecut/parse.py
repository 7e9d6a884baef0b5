"""TreeCut parsing: a problem text back into linear equations over its variables, every template and name form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from annotator.construction.treecut.render import capital
from annotator.construction.treecut.themes import Theme, article_for, get_theme


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
        # "a" or "an" (either is read; the generator writes "an" before a vowel), capitalised at a sentence start.
        self.articles = {"a", "an", "A", "An"}
        # Whole item phrases with the quantities the generator uses, for the fast path of `parse_sentence`.
        self.phrases: dict[str, tuple[int, str]] = {}
        for name, (variable, is_plural) in self.lookup.items():
            if is_plural:
                for n in range(2, 10):
                    self.phrases[f"{n} {name}"] = (n, variable)
            else:
                article = article_for(name)
                self.phrases[f"{article} {name}"] = self.phrases[f"{capital(article)} {name}"] = (1, variable)

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
                f"{quantity!r} is not a quantity (a, an or 2, 3, ...)", sentence=sentence
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
        return _common_difference(body, phrases)
    if body.startswith("The price of "):
        return _common_same(body, phrases)
    return _common_price_or_sum(body, phrases)


def _common_difference(body: str, phrases: dict[str, tuple[int, str]]) -> Equation | None:
    """`X cost(s) N dollars more / less than Y`."""
    left, _, right = body.partition(" than ")
    second = phrases.get(right)
    direction = left[-5:]
    if second is None or direction not in (" more", " less"):
        return None
    amount = _split_amount(left[:-5])
    if amount is None:
        return None
    rest, value = amount
    first = _common_subject(rest, phrases)
    if first is None:
        return None
    return Equation((first, (-second[0], second[1])), value if direction == " more" else -value, "difference")


def _common_subject(text: str, phrases: dict[str, tuple[int, str]]) -> tuple[int, str] | None:
    """`a pie costs` -> (1, "pie"), `2 pies cost` -> (2, "pie"); None unless the verb agrees with the quantity."""
    if text.endswith(" costs"):
        first = phrases.get(text[:-6])
        return first if first is not None and first[0] == 1 else None
    if text.endswith(" cost"):
        first = phrases.get(text[:-5])
        return first if first is not None and first[0] != 1 else None
    return None


def _common_same(body: str, phrases: dict[str, tuple[int, str]]) -> Equation | None:
    """`The price of X is the same as that of Y`."""
    left, sep, right = body[13:].partition(" is the same as that of ")
    first, second = phrases.get(left), phrases.get(right)
    if not sep or first is None or second is None:
        return None
    return Equation((first, (-second[0], second[1])), 0, "same")


def _common_price_or_sum(body: str, phrases: dict[str, tuple[int, str]]) -> Equation | None:
    """`X costs N dollars`, `k Xs cost N dollars` or `X and Y cost N dollars`."""
    amount = _split_amount(body)
    if amount is None:
        return None
    rest, value = amount
    if rest.endswith(" costs"):
        first = phrases.get(rest[:-6])
        return Equation((first,), value, "price") if first is not None and first[0] == 1 else None
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
        return _parse_same(body, vocab, sentence)
    if template == "difference":
        return _parse_difference(body, vocab, sentence)
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
    return _parse_sum(items, amount[1], vocab, sentence)


def _parse_same(body: str, vocab: _Vocabulary, sentence: str) -> Equation | None:
    left, sep, right = body[len("The price of ") :].partition(" is the same as that of ")
    if not sep:
        return None
    (a, x), (b, y) = vocab.term(left, sentence), vocab.term(right, sentence)
    return Equation(((a, x), (-b, y)), 0, "same")


def _parse_difference(body: str, vocab: _Vocabulary, sentence: str) -> Equation | None:
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
    return Equation(((a, x), (-b, y)), amount[1] if direction == "more" else -amount[1], "difference")


def _parse_sum(items: str, total: int, vocab: _Vocabulary, sentence: str) -> Equation | None:
    """`X and Y cost N`: try each " and " (an item name may contain one)."""
    start = items.find(" and ")
    first_error: _NameError | None = None
    while start != -1:
        try:
            (a, x), (b, y) = vocab.term(items[:start], sentence), vocab.term(items[start + 5 :], sentence)
            return Equation(((a, x), (b, y)), total, "sum")
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
    """A problem text as equations, in the order of its sentences."""

    equations: list[Equation]
    question: str  # the questioned variable (singular phrase)
    sentences: list[str]


def parse_problem(text: str, *, theme: str = "food", cache: dict[str, Equation] | None = None) -> ParsedProblem:
    """The equations and the questioned variable of a problem; TreeCutParseError names the first sentence that
    fits no template. `cache` (sentence -> equation) lets a problem and its counterpart share the parsing."""
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
