"""Streamlit helpers the pages share: sign-in, the page guard, text-safe Markdown, the question diff, the
candidate view and the guidelines. The core (`annotator/`) never imports this package or Streamlit."""
