"""Under the hood for a token-tree iteration: the one pass over the whole tree with its tree attention mask, and the
caches, where the kept path's entries are gathered instead of a crop (:mod:`specsim.lesson.hood_tree`)."""

from __future__ import annotations

import streamlit as st

from app import state
from app.charts import chart
from app.hood import figures as figs
from app.live.tokens import md_plain
from app.live.tree_figure import tree_figure
from specsim.core.trace import Trace
from specsim.lesson import hood, hood_tree
from specsim.lesson.replay import visible


def verification_section(trace: Trace, step: int) -> None:
    it = trace.iterations[step]
    tree = it.tree
    rows = hood_tree.tree_rows(trace, step)
    n, depth = len(rows) - 1, max(r.depth for r in rows)
    st.subheader("One pass over the whole tree")
    if n == 0:
        st.info(f"In this iteration the draft proposed nothing: the token budget left room for one token, the "
                f"target's own +1 ({md_plain(visible(it.extra.text))}), so the pass read the root alone and the draft "
                "spent no pass. Pick another iteration to see a tree checked.")
        return
    greedy = trace.settings.temperature == 0
    st.markdown(
        f"This iteration's draft proposed a **tree** of {n} guesses, {depth} level{'s' if depth != 1 else ''} deep: "
        "at each level it offered several candidates for the same position. The target reads the context's last "
        "token (the **root**, row 0: the previous loop's +1 token, or the prompt's first answer token, which no pass "
        f"has read yet) and all {n} guesses in **one** pass, {n + 1} inputs, in the order they were drafted, "
        "parents before children.\n\n"
        "Two candidates for the same position sit at the same place in the text, so a row's position is the "
        f"root's position plus its depth (here {rows[0].position} + depth), not its place in the pass. And a row "
        "must not read a rival candidate: the **tree "
        "attention mask** lets each row see the cached context, its own ancestors and itself, nothing else. Row "
        "i then returns, in exact arithmetic, what plain decoding would return after node i's own path.")
    chart(tree_figure(it), key=state.HOOD_TREE_FIGURE)
    st.markdown(hood_tree.growth_sentence(trace, step))
    table = [{"row": r.index, "parent row": "—" if r.parent is None else r.parent, "position": r.position,
              "input": visible(r.text), "q after its parent": "—" if r.q is None else f"{r.q:.2f}",
              "score (q down the path)": "—" if r.score is None else f"{r.score:.3f}",
              "target's top token after it (p)": f"{visible(r.target_top.text)} ({r.target_top.prob:.2f})",
              "verdict": hood_tree.VERDICT[r.status]} for r in rows]
    st.caption("q: the draft's probability of a guess after its parent; p: the target's probability of its own top "
               "token after the node's path.")
    st.dataframe(table, hide_index=True, width="stretch")
    decisive = rows[hood_tree.decisive_row(it)]
    where = "the root's row" if decisive.index == 0 else f"row {decisive.index}, the last kept guess"
    looks = ("the target's top token (this run is greedy, temperature 0)" if greedy else
             "the token the target's rule keeps (this run samples: EAGLE-2's rule, on Why the output is unchanged)")
    st.markdown(f"The walk starts at the root and, at each step, looks among the children for {looks}. "
                f"It kept {len(tree.kept_path())} guess{'' if len(tree.kept_path()) == 1 else 'es'}; {where} "
                f"decided the +1 token **{md_plain(visible(it.extra.text))}** ({it.extra_kind}).")
    labels, grid, hidden = hood_tree.tree_mask(it)
    names = [f"row {r.index}: {visible(r.text)!s}" for r in rows]
    chart(figs.mask_figure(labels, grid, hidden, names, "Tree attention mask of the verification pass: which "
                           "inputs each row may read (column: row @ position)"), key=state.HOOD_MASK_CHART)
    st.caption("A chain's mask is a staircase, row i reading rows 0 … i (pick a recording above to see one). Here "
               "row i reads only the rows on its own path, so two candidates at one position never see each other. "
               "In floating point a pass "
               "over many rows can round differently from a pass over one; the live page's note on invariance says "
               "when this app's output is still bit-identical to plain decoding.")


def cache_section(trace: Trace, step: int) -> None:
    it = trace.iterations[step]
    st.subheader("The KV caches in one iteration")
    st.markdown(
        "A **KV cache** keeps each layer's attention keys and values for every position already processed, so a "
        "pass over new tokens does not recompute the context. The tree pass writes an entry for every node, and "
        "only one path survives the walk.")
    if len(it.tree.nodes) == 1:
        st.markdown("- This iteration drafted nothing: the pass wrote the root's entry alone and kept it.")
        return
    story = hood.cache_story(it)
    if it.caches is not None:
        chart(figs.cache_figure(story, written="target: after the pass<br>draft: when the target checks",
                                after="after keeping the path"), key=state.HOOD_CACHE_CHART)
    for sentence in hood_tree.cache_sentences(it):
        st.markdown("- " + sentence)
