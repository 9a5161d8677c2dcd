"""*Why the output is unchanged*: top-k and top-p must cut the target's p before the ratio, so what comes out is the
cut target, never a token the cut removed; cutting the draft's q too is a choice (the proof holds for any q), made
because it usually raises α. Numbers from :func:`specsim.lesson.unchanged.warped` (the engine's warp in numpy)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app import state
from app.charts import chart
from app.unchanged import figures as figs
from app.unchanged import pq
from specsim.lesson import unchanged

TOP_K, TOP_P = 3, 0.9  # where the sliders start


def section(p: np.ndarray, q: np.ndarray, show_uncut: bool = True) -> None:
    """``show_uncut``: False until the learner has guessed Σ min(p, q) above, which no sentence here may give away."""
    st.markdown(
        "Samplers usually cut the distribution too: **top-k** keeps the k likeliest tokens, **top-p** the smallest "
        "set of them holding a share p of the mass, and what is left is renormalised (transformers applies the "
        "temperature, then top-k, then top-p; so does this app's engine). Speculative sampling must cut the "
        "**target**: the target keeps a guess with min(1, p′/q), a rejected slot draws from norm(max(0, p′ − q)) and "
        "the bonus token from p′. The proof above holds for any q, so it holds word for word with p′ in place of p, "
        "and the output follows p′, which is exactly what sampling the target alone with those settings means. "
        "Cutting the **draft** the same way (q′, as this app's engine does) is a choice, not part of "
        "the rule: it changes how often guesses are kept, never what comes out.")
    left, right = st.columns(2)
    k = int(left.slider("top-k", 1, len(p), TOP_K, key=state.PQ_TOP_K))
    top_p = float(right.slider("top-p", 0.05, 1.0, TOP_P, step=0.05, key=state.PQ_TOP_P))
    p_cut, q_cut = unchanged.warped(p, 1.0, k, top_p), unchanged.warped(q, 1.0, k, top_p)
    chart(figs.pq_figure(pq.LABELS, p_cut, q_cut, cut=True), key=state.PQ_CUT_CHART)
    st.markdown(cut_sentence(p, q, k, top_p, show_uncut))


def cut_sentence(p: np.ndarray, q: np.ndarray, k: int, top_p: float, show_uncut: bool = True) -> str:
    """What the cut leaves and what it does to α, computed; with ``show_uncut`` False, neither the uncut α nor a cut
    α equal to it (a cut that leaves p and q as they are)."""
    p_cut, q_cut = unchanged.warped(p, 1.0, k, top_p), unchanged.warped(q, 1.0, k, top_p)
    gone = [label.strip("␣") for label, before, after in zip(pq.LABELS, p, p_cut, strict=True)
            if before > 0 and after == 0]
    refused = [label.strip("␣") for label, a, b in zip(pq.LABELS, p_cut, q_cut, strict=True) if b > 0 and a == 0]
    text = (f"With top-k = {k} and top-p = {top_p:.2f}, the cut target p′ keeps {int((p_cut > 0).sum())} of the "
            f"{len(p)} tokens")
    text += f" ({', '.join(gone)} can never come out)." if gone else " (none is cut away here)."
    cut_alpha, uncut_alpha = unchanged.accepted_mass(p_cut, q_cut), unchanged.accepted_mass(p, q)
    if show_uncut:
        text += (f" The draft's guesses are kept with α = Σ min(p′, q′) = {cut_alpha:.3f}, against {uncut_alpha:.3f} "
                 "with neither cut.")
    elif f"{cut_alpha:.3f}" != f"{uncut_alpha:.3f}":
        text += (f" The draft's guesses are kept with α = Σ min(p′, q′) = {cut_alpha:.3f}; make your guess above to "
                 "compare it with no cut.")
    else:
        text += " Make your guess above to see how often the draft's guesses are kept here."
    if refused:
        text += (f" The cut draft still proposes {', '.join(refused)}, which p′ has cut away: such a guess is always "
                 "rejected, since p′ is 0 there.")
    uncut = unchanged.accepted_mass(p_cut, q)
    cut = unchanged.accepted_mass(p_cut, q_cut)
    change = f"α here, from Σ min(p′, q) = {uncut:.3f} to {cut:.3f}"
    effect = (f"raises {change}" if cut > uncut + 5e-4 else f"lowers {change}" if cut < uncut - 5e-4
              else "leaves α where it is here")
    text += (" Only the target must be cut: an uncut target writes tokens the cut target never would (it can keep "
             "a guess p′ has cut away, since min(1, p/q) is above 0 there, and its residual and +1 draw from all of "
             "p), so the output follows p, not p′. The draft may be cut or not, "
             f"and the output is p′ either way; cutting it {effect}. Drafts are usually cut because, when the two "
             "models rank the same tokens highest, the cut moves q's mass to where p′ is.")
    return text
