"""Which Streamlit element draws a math-dense model response cheapest in the browser.

One `streamlit run` of a one-page app (written to a temporary folder) whose fragment shows a heading and
`keys_data.RESPONSE` (about 2,000 characters, about 100 math segments) in a bordered box; a key (`N`)
shows the next one. One headless Chromium tab per way of drawing it, taking turns press by press; the probe
times keydown -> the first frame painted with the next response's end mark. Ways:

- `none`: only the end mark (the floor: the fragment's rerun and one small Markdown block)
- `markdown`: `escape_markdown(response)`, the math typeset (KaTeX), as Review draws it with math typeset
- `escaped`: `escape_text(response)`: escaped Markdown, math as its source, no KaTeX
- `text`: `st.text(response)`: no Markdown at all
- `code`: `st.code(response, language=None, wrap_lines=True)`

    python bench/bench_text_elements.py --presses 20
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_app, stop_app  # noqa: E402

WAYS = ["none", "markdown", "escaped", "text", "code"]
APP = f"""
import sys
sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / "bench")!r}]
import streamlit as st
from keys_data import RESPONSE
from ui.markdown import escape_markdown, escape_text

way = st.query_params.get("way", "markdown")
st.session_state.setdefault("n", 0)


def bump() -> None:
    st.session_state["n"] += 1


@st.fragment
def workspace() -> None:
    n = st.session_state["n"]
    st.button("Next", key="next", shortcut="N", on_click=bump)
    st.markdown(f"#### bench_{{n}}_x")
    body = f"{{RESPONSE}} (response r{{n}}x)"
    with st.container(border=True):
        st.markdown("**Response** · model · standard prompt · sample 0")
        if way == "markdown":
            st.markdown(escape_markdown(body))
        elif way == "escaped":
            st.markdown(escape_text(body))
        elif way == "text":
            st.text(body, width="stretch")
        elif way == "code":
            st.code(body, language=None, wrap_lines=True)
        else:
            st.markdown(f"(response r{{n}}x)")


workspace()
"""
PROBE = """
window.__bench = {start: null, painted: null};
addEventListener('keydown', (e) => { if (window.__bench.start === null) window.__bench.start = e.timeStamp; }, true);
window.__benchWatch = (n) => {
  const b = window.__bench;
  Object.assign(b, {start: null, painted: null});
  const selector = '[data-testid="stMarkdownContainer"], [data-testid="stText"], [data-testid="stCode"]';
  const shown = () => [...document.querySelectorAll('h4')].some((h) => h.textContent === `bench_${n}_x`)
    && [...document.querySelectorAll(selector)].some((el) => el.textContent.includes(`(response r${n}x)`)
      && el.checkVisibility());
  const observer = new MutationObserver(() => {
    if (b.start === null || b.painted !== null || !shown()) return;
    observer.disconnect();
    requestAnimationFrame(() => setTimeout(() => { b.painted = performance.now(); }, 0));
  });
  observer.observe(document.body, {subtree: true, childList: true, characterData: true});
};
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presses", type=int, default=20, help="timed presses per way")
    parser.add_argument("--warmup", type=int, default=3, help="untimed presses per way first")
    parser.add_argument("--ways", nargs="+", default=WAYS, choices=WAYS)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    workdir = Path(tempfile.mkdtemp(prefix="bench_text_elements_"))
    script = workdir / "app.py"
    script.write_text(APP)
    samples: dict[str, list[float]] = {way: [] for way in args.ways}
    app = start_app(f"sqlite:///{workdir / 'unused.sqlite'}", workdir / "app.log", script=str(script))
    load_before = " ".join(f"{value:.2f}" for value in os.getloadavg())
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            tabs = {}
            for way in args.ways:
                context = browser.new_context()
                context.add_init_script(PROBE)
                page = context.new_page()
                page.goto(f"{app.url}/?way={way}")
                page.locator("h4").first.wait_for()
                tabs[way] = page
            for index in range(args.warmup + args.presses):
                for way, page in tabs.items():
                    page.locator("[data-test-script-state=notRunning]").wait_for(state="attached")
                    page.wait_for_timeout(200)
                    page.evaluate("(n) => window.__benchWatch(n)", index + 1)
                    page.keyboard.press("n")
                    page.wait_for_function("window.__bench.painted !== null")
                    if index >= args.warmup:
                        samples[way].append(page.evaluate("window.__bench.painted - window.__bench.start"))
            browser.close()
    finally:
        stop_app(app)
    load_after = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"load average before {load_before}, after {load_after}; {args.presses} presses per way, interleaved")
    for way, values in samples.items():
        print(f"{way:>10} p50 {statistics.median(values):7.1f} ms   mean {statistics.mean(values):7.1f} ms")


if __name__ == "__main__":
    main()
