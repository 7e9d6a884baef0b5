"""Checking an endpoint's base URL: here, not in `annotator.runs.llm` (whose package loads the openai client), so that
the command line checks `--base-url` without it."""

from __future__ import annotations

from urllib.parse import urlsplit


def url_problem(url: str) -> str | None:
    """Why `url` cannot be an endpoint's base URL (not http(s), no host), or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError on a port that is not a number or out of range)
    except ValueError as exc:
        return f"is not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "is not an http:// or https:// URL with a host"
    return None
