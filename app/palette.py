"""The one palette: each idea of the lesson has one colour on every page, chart and token chip.

Figure builders and widgets import these names; none spells a colour of its own.
"""

from __future__ import annotations

# ---- the actors and the verdicts ------------------------------------------------------------------
DRAFT = "#4a78c2"  # the draft and its proposals, drafting time
TARGET = "#f2a541"  # the target: its passes, its probabilities, verification time
KEPT = "#2e9e5b"  # a proposal (or guess) the target accepted
REJECTED = "#d64545"  # the first proposal the target refused
EXTRA = "#7b3fe4"  # the target's own +1 token: correction, resample or bonus
MUTED = "#9aa5b1"  # unchecked slots, alternatives, reference lines, the prefill
MUTED_TEXT = "#66707c"  # MUTED as text: 5:1 on white (MUTED itself is 2.5:1, too faint to read; WCAG AA needs 4.5:1)
PLAIN = "#5b6776"  # plain decoding, the baseline
BACKGROUND = "#e8e8e8"  # time not attributed to any of the above
INK = "#444444"  # outlines drawn on top of a colour scale

NAMES = {DRAFT: "blue", TARGET: "orange", KEPT: "green", REJECTED: "red", EXTRA: "purple", MUTED: "light grey",
         PLAIN: "dark grey"}
"""What a caption calls each colour, so a caption names the colour its figure draws."""

# ---- colour scales ------------------------------------------------------------------------------
SLOWER, SLOWER_LIGHT, BREAK_EVEN, FASTER_LIGHT, FASTER = "#b2182b", "#ef8a62", "#f7f7f7", "#67a9cf", "#2166ac"
"""Speedup below 1× is red, exactly 1× white, above 1× blue (a diverging scale centred on break-even)."""
WRONG_CELL, RIGHT_CELL = "#f6cccc", "#cde9d7"
"""Pale REJECTED and KEPT, for table-like heatmaps whose cells carry text."""
