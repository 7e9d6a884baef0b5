"""Dataset and model text as text plus math: hostile strings, a property test over generated
text, and a check that pages pass data to Markdown-rendering calls only through `ui.markdown`.

The output is parsed with markdown-it-py (CommonMark, tables, strikethrough, linkify, dollar math), a stand-in
for Streamlit's micromark; what only Streamlit does (math detection by regex, rewrites of parsed text, trust-
gated KaTeX commands) is checked with Streamlit's own regexes, copied from its 1.67 frontend bundle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

from ui.markdown import JOINER, escape_markdown, split_math

PARSER = (
    MarkdownIt("commonmark", {"linkify": True})
    .enable(["table", "strikethrough", "linkify"])
    .use(dollarmath_plugin, allow_space=True, allow_digits=True, allow_blank_lines=False, double_inline=True)
)
SAFE_TOKENS = {"paragraph_open", "paragraph_close", "inline", "text", "softbreak", "hardbreak", "math_inline",
               "math_block", "math_inline_double", "math_block_label"}

# Streamlit 1.67, StreamlitMarkdown: the math plugin is loaded only when this finds math in the source.
_CODE_AND_ESCAPES = re.compile(r"(?:(?<=\n)|^) {0,3}(`{3,}|~{3,})[\s\S]*?(?:\n[ \t]*\1|$)|(?<!`)(`+)[^`\n]+\2(?!`)"
                               r"|\\[\\$`]")
_DISPLAY = re.compile(r"(?<!\$)\$\$+(?!\$)[\s\S]*?\$\$")
_INLINE = re.compile(r"(?<!\$)\$(?![\s$])[^$\n]*?[^\s$]\$(?!\d)")
# ... and what it rewrites in parsed text (math excepted): emoji shortcodes, `:streamlit:`, arrows; GFM's
# autolink literals.
_TEXT_REWRITES = [
    re.compile(r":\+1:|:-1:|:[\w-]+:"), re.compile(r":streamlit:"),
    re.compile(r"(^|\s)(<->|->|<-|--|>=|<=|~=)(\s|$)"),
    re.compile(r"(https?://|www(?=\.))([-.\w]+)", re.IGNORECASE), re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)"),
]
_TRUSTED_COMMANDS = re.compile(r"\\(?:href|url|includegraphics|html[A-Za-z]*)(?![A-Za-z])")


def streamlit_finds_math(markdown: str) -> bool:
    if "$" not in markdown:
        return False
    source = _CODE_AND_ESCAPES.sub("_", markdown)
    return bool(_DISPLAY.search(source) or _INLINE.search(source))


def _walk(tokens: list[Token]) -> list[Token]:
    out = []
    for token in tokens:
        out.append(token)
        out.extend(_walk(token.children or []))
    return out


def check_text_only(raw: str) -> None:
    """`escape_markdown(raw)` is text plus math and nothing else, however Streamlit reads it."""
    shown = escape_markdown(raw)
    tokens = _walk(PARSER.parse(shown))
    kinds = {token.type for token in tokens}
    assert kinds <= SAFE_TOKENS, (raw, shown, kinds - SAFE_TOKENS)
    maths = [token.content for token in tokens if token.type.startswith("math")]
    for math in maths:
        assert not _TRUSTED_COMMANDS.search(math), (raw, math)
        assert "\n\n" not in math
    if maths:  # Streamlit loads its math plugin for this source; without it, the math would be Markdown
        assert streamlit_finds_math(shown), (raw, shown)
    for token in tokens:
        if token.type == "text":
            for rewrite in _TEXT_REWRITES:
                assert not rewrite.search(token.content), (raw, token.content, rewrite.pattern)


TRACKER = "http://127.0.0.1:8765/track.png"
HOSTILE = [
    "$<img src=x>$\\",  # math the parser may not recognise (a backslash after it): `<img` must not be a tag
    f"$x\n\n![t]({TRACKER})$",
    f"$x\n\n[click]({TRACKER})$",
    f"$$x\n\n![t]({TRACKER})$$",
    f"\\(x$[l]({TRACKER})$\\)",
    f"\\(![t]({TRACKER})\\)5",
    f"\\[a $$ ![t]({TRACKER}) $$ b\\]",
    f"$\\href{{{TRACKER}}}{{click}}$",
    f"$\\url{{{TRACKER}}}$ and $\\includegraphics{{{TRACKER}}}$",
    "$\\htmlClass{x}{y}$ $\\htmlStyle{color:red}{y}$",
    f'$<img src="{TRACKER}">$ <img src="{TRACKER}">',
    ":red[alert] :material/home: :smile: :streamlit: :blue-background[x]",
    f"{TRACKER} www.example.com mail@example.com <{TRACKER}>",
    "**bold** _it_ ~~gone~~ `code` # h\n> quote\n- item\n1. first\n    indented\n---",
    "a -> b <- c <-> d -- e >= f <= g ~= h",
    "$a$$b$ $x$5 $$y$$7 \\(z\\)9",
    "$x \\$ and trailing \\",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "$`code`$ $a`b$ `$x$`",
    "&lt;img&gt; &#60;script&#62; &amp;",
    "\\[x\n\n\n# heading\\]",
    "$$~~~~$$ \\[~~~ ![t](x)\\]",  # display math starts a line: `~~~` there would open a code fence
]


@pytest.mark.parametrize("raw", HOSTILE)
def test_hostile_strings_are_text_plus_math(raw: str) -> None:
    check_text_only(raw)


def test_what_shows_is_the_data_with_its_math() -> None:
    """The characters shown are the data's (plus invisible joiners); safe math stays math."""
    shown = escape_markdown("Let $x^2 = 4$ and \\(y\\); then\n\n$$\\frac{1}{2}$$ :red[no] 1. http://a.b")
    assert "$x^2 = 4$" in shown and "$y$" in shown and "\n\n$$\n\\frac{1}{2}\n$$\n\n" in shown
    text = " ".join(t.content for t in _walk(PARSER.parse(shown)) if t.type == "text").replace(JOINER, "")
    assert text.split() == ["Let", "and", ";", "then", ":red[no]", "1.", "http://a.b"]


@pytest.mark.parametrize(("raw", "literal"), [
    (f"$x\n\n![t]({TRACKER})$", f"$x ![t]({TRACKER})$"),
    ("$\\href{http://e.x}{click}$", "$\\href{http://e.x}{click}$"),
    ("\\(a](b\\)", "\\(a](b\\)"),
])
def test_unsafe_math_is_shown_as_its_source_text(raw: str, literal: str) -> None:
    shown = escape_markdown(raw)
    text = " ".join(t.content for t in _walk(PARSER.parse(shown)) if t.type == "text").replace(JOINER, "")
    assert " ".join(text.split()) == " ".join(literal.split())
    assert not any(t.type.startswith("math") for t in _walk(PARSER.parse(shown)))


def test_math_blank_lines_are_folded_and_stay_math() -> None:
    assert escape_markdown("$a +\n\n b$") == "$a + b$"
    assert split_math("$a +\n\n b$")[0].source == "$a +\n\n b$"


FRAGMENTS = [
    "$", "$$", "\\(", "\\)", "\\[", "\\]", "\n", "\n\n", " ", "    ", "[", "]", "(", ")", "](", "![", "<", ">",
    "<img src=x>", "<a href='h'>", TRACKER, "www.e.co", "a@b.co", ":", "red[", ":smile:", ":streamlit:",
    ":material/home:", "->", "<-", "--", ">=", "*", "_", "~~", "`", "#", "- ", "1. ", "|", "---", "&amp;", "\\",
    "\\href{h}{t}", "\\url{h}", "\\htmlId{i}{t}", "\\frac{1}{2}", "x", "y2", "7", "é", "\t", "{", "}", "^",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join))
def test_any_text_is_text_plus_math(raw: str) -> None:
    check_text_only(raw)


# Calls whose text Streamlit renders as Markdown: the body of text elements, and widget labels and help.
_RENDERING = {
    "markdown", "caption", "write", "info", "error", "warning", "success", "toast", "title", "header", "subheader",
    "button", "form_submit_button", "download_button", "expander", "popover", "tabs", "checkbox", "toggle",
    "radio", "selectbox", "multiselect", "text_input", "text_area", "number_input", "pills", "segmented_control",
    "metric", "progress",
}
# Functions that return text-safe Markdown (each reviewed): ui.markdown's, ui.view's built on it, and pages'
# helpers whose parts all go through it.
# Values that are not data (numbers, our own words, Markdown built from escaped parts), each reviewed.
_SAFE_VALUES = {
    "user.role", "message", "heading", "status", "page.total", "page.page", "page.pages", "limit", "name", "value",
    "session", "age", "TTL_SECONDS", "judged", "who", "label", "title", "notes",
    "run.problems_done", "run.problems_total", "total", "run.id", "run.status", "unit", "run.requests",
    "run.cache_hits", "run.failures", "reason", "latest.id", "old", "new", "GUIDELINE", "SOLUTION", "MODEL_OUTPUTS",
    "lines", "target", "verdict.value", "coefficient.label", "coefficient.citation", "field.label", "KEY_HELP",
    "after", "rule_sets.REFERENCE_RULE", "rule_sets.RULE_SETS", "entry", "entry.name", "entry.description",
    "wanted", "came_with",  # a count in our words (`labels_wanted`); importers' names through escape_markdown
    "described",  # adaptive overlap's setting in our words (`adaptive.describe`: numbers only)
    "ACCURACY_HELP",  # Team's fixed words on the accuracy table
}
_SAFE_CALLS = {"escape_markdown", "text", "details", "verdicts", "_heading", "_status", "len", "int", "round",
               "label_name", "guideline_for", "_refusal", "name", "capitalize", "age_text",
               "_wait_text", "_width_caption",  # a wait in seconds; counts and interval method names
               "labels_wanted",  # a number of labels in our words
               "part_text", "freshness_text"}  # figures' ages in our words, their errors through escape_markdown


def _unsafe_parts(node: ast.AST) -> list[ast.AST]:
    """Sub-expressions that read data (a subscript, `.get(...)`, `str(...)`) outside a safe call."""
    if isinstance(node, ast.Call):
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if called in _SAFE_CALLS:
            return []
        if called in ("get", "str", "format"):
            return [node]
    if isinstance(node, ast.Subscript | ast.Name | ast.Attribute):
        return [] if ast.unparse(node) in _SAFE_VALUES else [node]
    if isinstance(node, ast.IfExp):  # the condition is not shown
        return _unsafe_parts(node.body) + _unsafe_parts(node.orelse)
    if isinstance(node, ast.Call):  # the function called is not shown
        return [part for child in [*node.args, *(k.value for k in node.keywords)] for part in _unsafe_parts(child)]
    return [part for child in ast.iter_child_nodes(node) for part in _unsafe_parts(child)]


def _renders(func: ast.AST) -> bool:
    """`st.markdown`, `column.caption`, ..., or `(st.success if ok else st.error)`."""
    if isinstance(func, ast.IfExp):
        return _renders(func.body) or _renders(func.orelse)
    return isinstance(func, ast.Attribute) and func.attr in _RENDERING


def _rendered_arguments(call: ast.Call) -> list[ast.AST]:
    arguments = list(call.args[:1])
    arguments += [keyword.value for keyword in call.keywords if keyword.arg in ("body", "label", "help", "text")]
    return arguments


def test_pages_pass_data_to_markdown_only_through_ui_markdown() -> None:
    """No page or ui helper hands a value read from data (`x[...]`, `.get(...)`, `str(exc)`) to a call that
    renders Markdown without `escape_markdown` (or a helper built on it) in between."""
    root = Path(__file__).resolve().parents[2]
    found = []
    for path in [root / "app.py", *sorted((root / "app_pages").glob("*.py")), *sorted((root / "ui").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _renders(node.func):
                for argument in _rendered_arguments(node):
                    found += [f"{path.name}:{part.lineno}: {ast.unparse(part)}" for part in _unsafe_parts(argument)]
    assert found == [], "\n".join(found)
