"""What the theme in ``.streamlit/config.toml`` cannot set for WCAG 2.1 AA (issue 51), installed on every page.

- Code blocks: Streamlit 1.67 colours Python and shell tokens in hard-coded hues of 2.96:1 to 3.8:1 on the code
  background (AA needs 4.5:1); the rules below draw each kind of token in a darker shade of the same hue.
- Regions that scroll sideways (a code block's ``pre``, a displayed formula wider than the column): a keyboard can
  scroll only what it can focus, and Streamlit makes neither focusable. A small script gives each one
  ``tabindex="0"`` as it appears.
"""

from __future__ import annotations

import streamlit as st

_KEY = "specsim_a11y"
_SCROLLERS = '[data-testid="stCode"] pre, .katex-display'

# Token kinds (Prism's class names) -> a colour of at least 5:1 on Streamlit's code background (#fcfcfb).
_TOKEN_COLOURS = {
    "#0b5cad": ("keyword", "atrule", "important"),  # blue, 6.5:1 (was #1c83e1, 3.8:1)
    "#0a7a33": ("string", "char", "attr-value", "regex", "boolean", "inserted"),  # green, 5.3:1 (was #09ab3b, 2.96:1)
    "#0b7366": ("number", "constant", "symbol"),  # teal, 5.6:1
    "#b34700": ("operator", "entity", "url", "deleted"),  # orange, 5.4:1
    "#006f8f": ("variable", "parameter", "function", "class-name", "builtin", "property", "tag", "selector",
                "attr-name"),  # cyan-blue, 5.5:1
    "#5c6070": ("punctuation", "comment", "prolog", "doctype", "cdata"),  # grey, 6.1:1
}
_CSS = "\n".join(
    ", ".join(f'[data-testid="stCode"] .token.{kind}' for kind in kinds) + f" {{ color: {colour}; }}"
    for colour, kinds in _TOKEN_COLOURS.items()
)

_INSTALL = f"""<style>
div:has(> .st-key-{_KEY}) {{ display: none; }}
{_CSS}
</style>
<script>
(() => {{
  if (window.__specsimA11y) return;
  window.__specsimA11y = true;
  let queued = false;
  const mark = () => {{
    queued = false;
    document.querySelectorAll('{_SCROLLERS}').forEach(el => {{
      if (!el.hasAttribute('tabindex')) el.setAttribute('tabindex', '0');
    }});
  }};
  new MutationObserver(() => {{
    if (!queued) {{ queued = true; requestAnimationFrame(mark); }}
  }}).observe(document.body, {{childList: true, subtree: true}});
  mark();
}})();
</script>"""


def install() -> None:
    """Add the rules and the script above to the page (once per browser tab; a hidden container takes no room)."""
    with st.container(key=_KEY):
        st.html(_INSTALL, unsafe_allow_javascript=True)
