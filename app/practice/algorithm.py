"""*In practice*'s "The algorithm as code": the acceptance rule the engine runs, read from its source file (never a
copy), beside Leviathan et al.'s Algorithm 1 in this app's notation, with a table that ties one to the other."""

from __future__ import annotations

import ast

import streamlit as st

from specsim.core.paths import REPO_ROOT

RULE_FILE, RULE = "specsim/core/acceptance.py", "verify"

ALGORITHM_1 = """\
given the prefix, the draft's guesses x[1] … x[K] and their q[1] … q[K],
and the target's p[1] … p[K+1] from ONE pass over prefix + x[1] … x[K]:

  u[1] … u[K] ~ Uniform(0, 1)
  j = the first i with u[i] > p[i](x[i]) / q[i](x[i]), minus 1   (K if none)
  if j < K:  p' = norm(max(0, p[j+1] − q[j+1]))                 (the residual)
  else:      p' = p[K+1]                                         (the bonus row)
  t ~ p'
  return prefix + x[1] … x[j] + t"""
"""Leviathan, Kalman and Matias (2023), Algorithm 1 (SpeculativeDecodingStep), steps after the draft and the one
target pass, written here in the notation of these pages (K guesses, p the target, q the draft, j the guesses kept;
the paper's r and n are u and j here, since Under the hood's rᵢ is an acceptance rate and n counts a pass's
tokens)."""

#: (a line of Algorithm 1, the code that does it, what differs) for the table under the two listings; each code
#: cell is a line of the rule's source, which a test checks.
CORRESPONDENCE = (
    ("u[1] … u[K] ~ Uniform(0, 1)", "draw = None if sampling.greedy else uniform(generator)",
     "drawn one slot at a time, and none after the first rejection: the same distribution, fewer draws"),
    ("j = the first i with u[i] > p[i](x[i]) / q[i](x[i]), minus 1",
     "acceptance_probability(float(target_probs[i, token]), proposal.q[i])",
     "greedy mode keeps a guess exactly when it is the target's top token (the limit T → 0)"),
    ("p' = norm(max(0, p[j+1] − q[j+1]))", "residual_distribution(p, q)", "greedy mode takes the target's top token"),
    ("p' = p[K+1]", "elif verdict.n_accepted == len(draft_tokens)", "the bonus token"),
    ("(not in the paper)", "if token in eos:",
     "an accepted end-of-text ends the text: later guesses are not checked"),
)


def rule_source() -> tuple[str, int]:
    """The acceptance rule's source as the engine runs it, read from its file (a class replica imports no torch),
    and its first line number."""
    text = (REPO_ROOT / RULE_FILE).read_text(encoding="utf-8")
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == RULE)
    return ast.get_source_segment(text, node), node.lineno


def section() -> None:
    source, first = rule_source()
    st.markdown(
        "**The algorithm as code.** First, the paper's rule for one loop after the draft and the target's single "
        "pass; then the function the engine calls in every loop of every run on this site, read from its source "
        "file as it is now.")
    with st.expander("How this was measured"):
        st.markdown(f"`{RULE}` is read from `{RULE_FILE}` when the page opens: {len(source.splitlines())} lines from "
                    f"line {first}, docstring included. The draft and the pass itself are `SpeculativeStep.check` in "
                    "`specsim/core/engine.py`.")
    st.code(ALGORITHM_1, language=None)  # one above the other: side by side, both listings scrolled sideways
    st.caption("Leviathan et al. (2023), Algorithm 1, after the draft and the pass, in the notation of these pages: "
               "the paper's r and n are u and j here (j, the guesses kept, as on every page).")
    st.code(source, language="python")
    st.caption(f"`{RULE}` in `{RULE_FILE}`: the code that runs, not a copy.")
    # a table, not a dataframe: its cells wrap, where a dataframe cut "what differs" off at the column's edge
    st.table([{"Algorithm 1": a, "specsim": code, "what differs": note} for a, code, note in CORRESPONDENCE],
             hide_index=True)
