"""Final answers of unusual shapes that the in-process judge must give a verdict on within its time limit: values
sympy cannot order (NaN, complex infinity, indeterminate forms), exponent towers and factorials whose value has
millions of digits, thousands-of-digit numbers, deep braces, long sums, Unicode digits, text in a list's form."""

from __future__ import annotations

EDGE_ANSWERS: tuple[str, ...] = (
    "\\text{NaN}",
    "nan",
    "\\infty - \\infty",
    "\\frac{0}{0}",
    "0^0",
    "\\frac{1}{0}",
    "\\tilde{\\infty}",
    "zoo",
    "\\infty \\cdot 0",
    "\\frac{\\infty}{\\infty}",
    "1^{\\infty}",
    "-\\infty",
    "\\sqrt{-1}",
    "\\log(0)",
    "2^{2^{40}}",
    "10^{10^{10}}",
    "9^{9^{9}}",
    "2^{2^{2^{2^{2}}}}",
    "(10^{10})^{10^{10}}",
    "10^{10^{10}} - 10^{10^{10}}",
    "\\frac{10^{10^{10}}}{10^{10^{10}}}",
    "e^{10^{10}}",
    "(10^{9})!",
    "10^{9}!",
    "\\binom{10^{12}}{10^{6}}",
    "2^{10^{6}} \\bmod 7",
    "1" + "0" * 5000,
    "-" + "9" * 5000,
    "0." + "3" * 5000,
    "9" * 5000 + "/" + "7" * 4999,
    "\\frac{" + "1" * 5000 + "}{" + "3" * 5000 + "}",
    "{" * 500 + "1" + "}" * 500,
    "(" * 300 + "x" + ")" * 300,
    "\\sqrt{" * 200 + "2" + "}" * 200,
    " + ".join(f"x_{{{k}}}" for k in range(1000)),
    " + ".join(str(k) for k in range(1000)),
    "\\sum_{k=1}^{10^{10}} k",
    "\\prod_{k=1}^{10^{6}} k",
    "\u0664\u0662",  # Arabic-Indic digits: 42
    "\uff14\uff12",  # full-width digits: 42
    "\u00bd",
    "\u2155 + \u00b2",
    "['m_{p} c^{2}(\\gamma^{2}-1) \\sin ^{2} \\theta']",
    "['1', '2']",
    "[]",
    "\\{\\}",
    "\\emptyset",
    "x = 10^{10^{10}}",
    "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}^{10^{10}}",
    "",
    "\\",
    "}{",
    "\x00",
)

# One of each kind an attacker's file held (NaN, complex infinity, indeterminate forms, exponent towers, 5,000-digit
# numbers, deep braces, a 1,000-term sum, Unicode digits): the benchmark gives every item of the release each one.
ATTACK_ANSWERS: tuple[str, ...] = (
    "\\text{NaN}",
    "\\tilde{\\infty}",
    "\\frac{0}{0}",
    "\\infty - \\infty",
    "2^{2^{40}}",
    "10^{10^{10}}",
    "9^{9^{9}}",
    "1" + "0" * 5000,
    "{" * 500 + "1" + "}" * 500,
    " + ".join(f"x_{{{k}}}" for k in range(1000)),
    " + ".join(str(k) for k in range(1000)),
    "\u0664\u0662",
)
