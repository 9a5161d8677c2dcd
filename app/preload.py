"""What every script run imports before any page draws (issue 62).

plotly checks a value's type against pandas by peeking at ``sys.modules`` (``get_module("pandas",
should_load=False)``) instead of importing it. On a fresh server, one session's first table imports pandas while
another session builds a figure: the second finds pandas half initialised and fails with "partially initialized
module 'pandas' has no attribute 'Series'". An ``import`` statement waits until another thread's import of the same
module has finished, so a script run that imports pandas itself, before anything else, never sees it half made.
"""

from __future__ import annotations


def modules() -> None:
    """Import, to the end, the modules plotly peeks at; cheap after the first session."""
    import pandas  # noqa: F401
