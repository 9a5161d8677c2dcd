"""In practice, "When to use it, and when not": the conditions the earlier pages found, pulled together, each with the
page that shows it. No figures typed here: each row points to the page that computes them, or quotes
:mod:`specsim.core.published`."""

from __future__ import annotations

from dataclasses import dataclass

from specsim.core.published import CHEN_HUMANEVAL, CHEN_XSUM


@dataclass(frozen=True)
class Condition:
    what: str
    use_it: str
    think_twice: str
    page: str  # the page title that shows it


CONDITIONS: tuple[Condition, ...] = (
    Condition("Batch size", "one or a few requests at a time: the pass waits on memory, and checking is nearly free",
              "many requests with short contexts: the batch already uses the arithmetic, so shorten K or switch "
              "speculation off under load", "Serving many requests"),
    Condition("Context length", "long contexts: reading each request's KV cache keeps a step memory-bound for "
              "longer", "short contexts at large batch: the weights' arithmetic dominates the step",
              "Serving many requests"),
    Condition("Model kind", "a dense target: K + 1 tokens read the same weights as one",
              "a mixture-of-experts target at small batch: K + 1 tokens read more experts than one",
              "Serving many requests"),
    # the papers' evidence, on the page that quotes it: this app's own runs are too small to separate the domains
    Condition("Kind of text", "predictable or repetitive text: code, structured output, answers that quote the "
              "prompt (prompt lookup needs no draft at all there); Chen et al. measured "
              f"{CHEN_HUMANEVAL.speedup:.2f}× on code against {CHEN_XSUM.speedup:.2f}× on summaries, the same pair "
              f"at K = {CHEN_HUMANEVAL.k}", "open-ended, creative text: the draft is right less often, and a loop of "
              "refusals costs more than it writes", "The idea"),
    Condition("Temperature", "greedy or low temperature: the draft agrees more often",
              "high temperature: the target's choices spread out and acceptance usually falls",
              "Why the output is unchanged"),
    Condition("The draft", "a small model that shares the target's tokenizer, or a head (EAGLE, Medusa, MTP) "
              "trained for this very target", "a draft with another tokenizer (it can be paired, at a price), or a "
              "head trained for another model", "In practice"),
    Condition("Memory", "room for the draft's weights and its own KV cache beside the target's",
              "a server already short of cache memory: the draft's cache takes room from the batch",
              "Serving many requests"),
    Condition("Hardware", "a GPU serving one request, where a pass is memory-bound",
              "a CPU that runs short of arithmetic at a few tokens, or a tiny model whose pass is set by kernel "
              "launches: measure v(n) first", "Is verification free here?"),
)


def table_markdown() -> str:
    rows = "\n".join(f"| **{c.what}** | {c.use_it} | {c.think_twice} | *{c.page}* |" for c in CONDITIONS)
    return ("| | use it when | think twice when | shown on |\n|---|---|---|---|\n" + rows)


CLOSING = ("Whatever the table says, measure on your own traffic: acceptance α and tokens per loop τ on real "
           "requests, and the wall clock against plain decoding on the same hardware. The output follows the target's "
           "either way (on a GPU, floating-point near-ties can still flip a greedy token, as *Why the output is "
           "unchanged* shows under *In floating point*), so switching speculation on or off is a question of speed, "
           "and a server can do it per load (vLLM's K by batch size) or per request.")
