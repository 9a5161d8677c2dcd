"""One line for an error, for messages shown to users (the UI, the CLI, the logs)."""

from __future__ import annotations


def brief_error(error: BaseException, limit: int = 300) -> str:
    """``Type: message`` on one line; a long message ends at a sentence or word, marked with …, never mid-word."""
    text = " ".join(str(error).split()).rstrip(".")
    if len(text) > limit:
        cut = text[:limit]
        end = cut.rfind(". ")
        text = cut[: end + 1] if end > limit // 2 else cut[: cut.rfind(" ")].rstrip(",;:") + " …"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
