"""Reading a recorded run back, one iteration at a time.

A :class:`~specsim.core.trace.Trace` holds everything that happened; this module turns it into what a
learner looks at: the text so far as token chips, a sentence per iteration, the run's statistics
next to the calculator's prediction, and the check that greedy speculative decoding wrote exactly
what plain decoding wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from specsim.core.defaults import MAX_INVARIANT_QUERIES
from specsim.core.trace import Iteration, Settings, Trace
from specsim.measure.costmodel import CostModel, cost_model

Role = Literal["prompt", "output", "accepted", "rejected", "unchecked", "extra"]
"""What a chip is: the prompt, text emitted by earlier iterations, or a slot of the current one."""


@dataclass(frozen=True)
class Chip:
    """One piece of text on screen with the part it plays in the current iteration."""

    text: str
    role: Role
    token_id: int | None = None
    position: int | None = None  # draft slot t+position, or K+1 for a +1 token after a full acceptance
    p: float | None = None  # the target's probability for this token
    q: float | None = None  # the draft's probability for this token
    accept_prob: float | None = None  # min(1, p/q) when sampling; 1 or 0 when greedy
    note: str = ""  # how a +1 token was chosen: correction, resample or bonus; "copied" for a copied proposal
    draw: float | None = None  # sampling: the uniform number compared with accept_prob
    greedy: bool = False  # the run was greedy: a slot is kept iff it is the target's top choice
    cut: bool = False  # a sampled run with top-k or top-p: p and q are the cut distributions p′ and q′


def visible(text: str) -> str:
    """Token text with whitespace made visible: spaces as ␣, newlines as ↵, tabs as →."""
    if text == "":
        return "∅"
    return text.replace(" ", "␣").replace("\n", "↵").replace("\t", "→")


# ---- the text so far ---------------------------------------------------------------------------
def emitted_texts(it: Iteration) -> list[str]:
    """Text of each token the iteration appended: the kept proposals, then the +1 token.

    ``it.emitted`` may be shorter than n_accepted + 1 when EOS or the token budget ended the run.
    """
    texts = [s.text for s in it.slots[: it.n_accepted]] + [it.extra.text]
    return texts[: len(it.emitted)]


def prefilled_texts(trace: Trace) -> list[str]:
    """Text of the token the prefill chose, before any iteration (empty in traces recorded without it)."""
    return [] if trace.first is None else [trace.first.text]


def is_cut(trace: Trace) -> bool:
    """A sampled run with top-k, top-p or min-p: every p and q it recorded is a cut distribution, p′ or q′."""
    s = trace.settings
    return not is_greedy(trace) and (s.top_k is not None or s.top_p is not None or bool(s.min_p))


def chips_at(trace: Trace, index: int, prompt: bool = True) -> list[Chip]:
    """The text before iteration ``index`` followed by that iteration's proposals, verdicts and +1 token."""
    if not 0 <= index < len(trace.iterations):
        raise IndexError(f"iteration {index} is outside 0..{len(trace.iterations) - 1}")
    chips: list[Chip] = [Chip(trace.prompt, "prompt")] if prompt else []
    if trace.first is not None:  # the prefill's token: text before the first loop
        chips.append(Chip(trace.first.text, "output", token_id=trace.first.token_id, note="prefill"))
    for it in trace.iterations[:index]:
        chips += [Chip(text, "output", token_id=tid) for text, tid in zip(emitted_texts(it), it.emitted, strict=True)]
    it = trace.iterations[index]
    cut = is_cut(trace)
    for s in it.slots:
        chips.append(Chip(s.text, s.status, token_id=s.token_id, position=s.position, p=s.p, q=s.q,
                          accept_prob=s.accept_prob, draw=s.draw, greedy=is_greedy(trace),
                          note="copied" if s.copied else "", cut=cut))
    if len(it.emitted) > it.n_accepted:  # the +1 token made it into the output
        extra_at = it.n_accepted + 1
        chip = Chip(it.extra.text, "extra", token_id=it.extra.token_id, position=extra_at, p=it.extra.prob,
                    note=it.extra_kind, cut=cut)
        # It lands on the first rejected slot (just after it on screen), or after the last proposal.
        insert_at = len(chips) - (it.k - it.n_accepted) + (1 if it.n_accepted < it.k else 0)
        chips.insert(insert_at, chip)
    return chips


def output_text(trace: Trace, upto: int) -> str:
    """The generated text after the prefill and iterations 0..upto-1 (plain string, no prompt)."""
    return "".join(prefilled_texts(trace) + [t for it in trace.iterations[:upto] for t in emitted_texts(it)])


def after_prefill(trace: Trace) -> str:
    """Words that say a count of loop tokens leaves out the prefill's ("" for a trace recorded before it chose one)."""
    return ", after the first, which the prompt's prefill chose" if trace.n_prefilled else ""


# ---- one sentence per iteration ---------------------------------------------------------------
def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def is_greedy(trace: Trace) -> bool:
    return trace.settings.temperature <= 0.0


def chance(x: float) -> str:
    """A probability for a sentence: two decimals, more for small ones, never a misleading 0.00."""
    if x == 0 or x >= 0.01:
        return f"{x:.2f}"
    return f"{x:.4f}" if x >= 0.0001 else "below 0.0001"


def narrate(trace: Trace, index: int) -> str:
    """What happened in iteration ``index``, in plain words."""
    it = trace.iterations[index]
    if it.tree is not None:
        return narrate_tree(trace, index)
    greedy = is_greedy(trace)
    k, j, n_out = it.k, it.n_accepted, len(it.emitted)
    extra = repr(it.extra.text)
    own = f"emitted {extra} itself" if greedy else (
        f"drew {extra} from the leftover distribution norm(max(0, p − q)), that is max(0, p − q) rescaled to sum to 1")
    n_copied = sum(s.copied for s in it.slots)
    drafted = f"Drafted {k}" if not n_copied else (
        f"Drafted {k} ({'all' if n_copied == k else n_copied} copied from earlier in the text, where the same "
        f"tokens came before)")
    if k == 0:
        sentence = f"The drafter had nothing to propose, so the target emitted {extra} itself"
    elif it.ended_by_text_end:
        first = "the first one" if j == 1 else f"the first {j}"
        rest = "the proposal after it was" if k - j == 1 else f"the {k - j} proposals after it were"
        sentence = (f"{drafted}, the target agreed with {first}, which ended the text ({it.slots[j - 1].text!r}); "
                    f"{rest} not checked")
    elif j == k:
        sentence = f"{drafted}, the target agreed with {'it' if k == 1 else f'all {k}'}"
        if n_out > j:
            sentence += f" and added {extra} as a bonus from its verification pass"
    else:
        rejected = it.slots[j]
        if greedy:
            why = f"its own top choice was {extra}"
        elif rejected.draw is not None:
            why = f"kept with chance {chance(rejected.accept_prob)}; the random draw {rejected.draw:.2f} was above that"
        else:
            why = f"kept with chance {chance(rejected.accept_prob)}, and the coin said no"
        agreed = "" if j == 0 else f"the target agreed with the first {j if j > 1 else ''}".rstrip() + ", "
        verb = "the target rejected the first one, " if j == 0 else "rejected "
        sentence = f"{drafted}, {agreed}{verb}{rejected.text!r} ({why})"
        if n_out > j:
            sentence += f", and {own}"
    sentence += f": {_plural(n_out, 'token')} this loop"
    if it.stop_reason == "eos":
        sentence += " (the end-of-text token ended the run)"
    elif it.stop_reason == "max_new_tokens":
        sentence += " (the token budget ended the run)"
    elif it.stop_reason:
        sentence += f" (the run stopped: {it.stop_reason})"
    return sentence + "."


# ---- the whole run ----------------------------------------------------------------------------
def _guesses(n: int, before: str = "") -> str:
    return f"{n} {before}guess" if n == 1 else f"{n} {before}guesses"


def narrate_tree(trace: Trace, index: int) -> str:
    """What happened in a tree iteration ``index`` (:mod:`specsim.core.trees`), in plain words: the one pass, the walk
    down the tree, where it stopped and why, and the +1 token."""
    it = trace.iterations[index]
    tree, greedy = it.tree, is_greedy(trace)
    nodes = tree.nodes
    if len(nodes) == 1:
        return (f"Drafted nothing: the token budget left room for one token, so the target's one-token pass chose "
                f"{it.extra.text!r} itself, and the run ended there.")
    sentence = (f"Drafted a tree of {_guesses(len(nodes) - 1)}; the target scored them all, with the context's last "
                f"token, in one pass of {tree.width_read} tokens, then walked down from the root")
    kept = [nodes[n].token.text for n in tree.kept_path()]
    if kept:
        own = "its own token" if greedy else "its sampled token"
        sentence += f" and kept {', '.join(repr(t) for t in kept)}, {own} at each step"
    stopped = [n.token.text for n in nodes if n.status == "refused"]
    unreached = sum(1 for n in nodes if n.status == "unchecked")
    extra = repr(it.extra.text)
    if it.stop_reason == "eos" and len(it.emitted) == it.n_accepted:
        sentence += ", which ended the text"
    elif stopped and greedy:
        where = "at the first position" if not kept else "at the next position"
        sentence += (f"; {where} its own token was {extra}, and no guess there matched "
                     f"({', '.join(repr(t) for t in stopped)}), so it added {extra} itself")
    elif stopped:
        where = "at the first position" if not kept else "at the next position"
        sentence += (f"; {where} its draws refused {', '.join(repr(t) for t in stopped)}, so it drew "
                     f"{extra} from what was left of p once they were taken out")
    elif len(it.emitted) > it.n_accepted:
        sentence += f"; the path ended at the tree's edge, so the pass's last row gave a bonus token, {extra}"
    if unreached:
        sentence += f" ({_guesses(unreached)} below a guess that was not kept {'was' if unreached == 1 else 'were'} " \
                    "never reached by the walk)"
    sentence += f": {_plural(len(it.emitted), 'token')} this loop"
    if it.stop_reason == "max_new_tokens":
        sentence += " (the token budget ended the run)"
    return sentence + "."


def kept_counts(trace: Trace) -> list[int]:
    """How many iterations kept 0, 1, ..., K proposals (index = number kept; K: the run's largest)."""
    counts = [0] * (trace.k_max + 1)
    for it in trace.iterations:
        counts[it.n_accepted] += 1
    return counts


@dataclass(frozen=True)
class RunStats:
    """What a speculative run did, and its cost model against the plain run of the same prompt."""

    k: int
    iterations: int
    generated: int
    alpha: float  # Trace.acceptance_rate
    kept_share: tuple[float | None, ...]  # Trace.kept_share_by_position()
    kept_counts: tuple[int, ...]
    tokens_per_pass: float  # Trace.tokens_per_pass
    costs: CostModel | None = None  # c, v, o and the speedups; None without a finished plain baseline


def run_stats(spec: Trace, plain: Trace | None = None) -> RunStats:
    """Statistics of ``spec``; the cost model needs the ``plain`` baseline."""
    comparable = plain is not None and plain.iterations and spec.iterations and plain.decode_time_s > 0 \
        and spec.decode_time_s > 0
    return RunStats(
        k=spec.settings.k,
        iterations=len(spec.iterations),
        generated=spec.n_generated,
        alpha=spec.acceptance_rate,
        kept_share=tuple(spec.kept_share_by_position()),
        kept_counts=tuple(kept_counts(spec)),
        tokens_per_pass=spec.tokens_per_pass,
        costs=cost_model([spec], [plain]) if comparable else None,
    )


# ---- greedy identity --------------------------------------------------------------------------
@dataclass(frozen=True)
class Identity:
    """Whether the speculative and plain runs produced the same tokens."""

    identical: bool
    compared: int  # tokens compared (the shorter run's length)
    dtype: str
    index: int | None = None  # first differing position in the generated tokens
    spec_token: str | None = None  # its text in each run; "(end)" when that run had already stopped
    plain_token: str | None = None


def spec_token_texts(trace: Trace) -> list[str]:
    """The text of every generated token: the prefill's, then each iteration's."""
    return prefilled_texts(trace) + [t for it in trace.iterations for t in emitted_texts(it)]


def identity(spec: Trace, plain: Trace) -> Identity:
    """Compare generated tokens; only meaningful in greedy mode, where they must be equal."""
    a, b = spec.generated_ids, plain.generated_ids
    n = min(len(a), len(b))
    dtype = spec.settings.dtype
    first = next((i for i in range(n) if a[i] != b[i]), None)
    if first is None and len(a) == len(b):
        return Identity(True, n, dtype)
    if first is None:
        first = n
    spec_texts = spec_token_texts(spec)
    plain_texts = spec_token_texts(plain)
    return Identity(
        False, n, dtype, first,
        spec_texts[first] if first < len(spec_texts) else "(end)",
        plain_texts[first] if first < len(plain_texts) else "(end)",
    )


def identity_guarantee(settings: Settings, longest_pass: int | None = None) -> str:
    """What greedy identity means for the numerics a run used: a guarantee, or an observation.

    ``longest_pass``: the most tokens one verification pass of the run carried (:attr:`Trace.longest_pass`);
    without it, the K setting's K + 1.
    """
    on_gpu = settings.device.startswith("cuda")
    longest = settings.k + 1 if longest_pass is None else longest_pass
    carried = (f"this run's longest carried {longest}" if longest_pass is not None
               else f"this run's carried at most K + 1 = {longest}")
    if settings.invariant and not on_gpu and longest <= MAX_INVARIANT_QUERIES:
        return (f"Guaranteed, not just observed: in {settings.dtype} with the position-invariant decode path, each "
                "position's logits are bitwise the same whether the target computes it alone or inside a "
                f"verification pass (the path covers passes of up to {MAX_INVARIANT_QUERIES} new tokens; "
                f"{carried}), so greedy speculative decoding must write plain decoding's tokens.")
    if settings.invariant and not on_gpu:
        return (f"Not guaranteed for this run: the position-invariant path covers passes of up to "
                f"{MAX_INVARIANT_QUERIES} new tokens, and {carried}, so the longer passes ran on stock kernels.")
    if on_gpu:
        return (f"Usual but not guaranteed: in {settings.dtype} on a GPU, a pass over several positions may use "
                "other kernels than a one-position pass and round differently, so a near-tie can flip.")
    return (f"Usual but not guaranteed: on this CPU, {settings.dtype} matrix kernels change their summation order "
            "with the number of rows in a pass, so a position verified among K + 1 can round differently from the "
            "same position decoded alone, and a near-tie can flip. The bfloat16 position-invariant path (the "
            "default on CPUs with native bfloat16) makes it a guarantee.")
