"""Edge runs made by the engine (issue 51): real traces, recorded by :func:`specsim.liverun.run_live`
exactly as
the live page records a run, on tiny random models built in a moment.

Each case is a run the recordings do not cover: a budget of one token (the prefill writes it, no loop), two tokens
(one loop with no room for a guess), every guess rejected, end-of-text as
the first token, K = 16 with a draft that is always right, transformers' schedule from K = 16, the confidence stop,
sampling at T = 1.5, prompt lookup with nothing to copy, and a custom tiny pair of two different models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import torch

from specsim.core.drafters import PromptLookupDrafter, Proposal
from specsim.core.kpolicy import CONFIDENCE_STOP, KPolicy
from specsim.core.model_drafters import ModelDrafter
from specsim.core.models import LoadedModel
from specsim.core.sampling import SamplingConfig
from specsim.core.tiny import tiny_llama, tiny_loaded
from specsim.core.trace import Trace
from specsim.liverun import run_live

VOCAB = 48
TARGET_SEED, DRAFT_SEED = 1, 2
PROMPT = [3, 17, 5, 29, 11, 40, 8, 23]  # no token twice: prompt lookup has nothing to copy from it


class ContraryDrafter:
    """Always guesses a token the target does not pick (its argmax plus one): in greedy mode every loop's first
    guess is rejected, so no guess is ever kept. A test drafter; the loop, the check and the trace are the engine's."""

    kind, name, needs_target_hidden = "draft_model", "contrary draft (always wrong)", False

    def __init__(self, target: LoadedModel):
        self.target = target

    def start(self, prompt_ids: Sequence[int], vocab_size: int, target_hidden=None) -> None:
        self.vocab = vocab_size

    def propose(self, context: Sequence[int], k: int, sampling: SamplingConfig, generator, stop_below: float = 0.0
                ) -> Proposal:
        if k <= 0:
            return Proposal()
        with torch.inference_mode():
            top = int(self.target.model(input_ids=torch.tensor([list(context)])).logits[0, -1].argmax())
        wrong = (top + 1) % self.vocab
        return Proposal(tokens=[wrong] * k, q=[1.0] * k, top=[[(wrong, 1.0)]] * k, pass_times=[1e-4] * k)

    def observe(self, context: Sequence[int], target_hidden=None) -> None:
        pass


@dataclass(frozen=True)
class Case:
    name: str
    k: int
    max_new_tokens: int
    temperature: float = 0.0
    policy: str = "fixed"  # "fixed", "heuristic" or "confidence" (the live page's names)
    drafter: str = "pair"  # "pair" (a different tiny draft), "self" (the target's own weights), "contrary", "lookup"
    eos_first: bool = False  # the target's end-of-text is the token its prefill chooses


CASES = (
    Case("one token", 4, 1),
    Case("two tokens", 4, 2),
    Case("every guess rejected", 4, 12, drafter="contrary"),
    Case("end-of-text first", 4, 12, eos_first=True),
    Case("K = 16", 16, 40, drafter="self"),
    Case("transformers' schedule from K = 16", 16, 60, policy="heuristic", drafter="self"),
    Case("confidence stop", 8, 16, policy="confidence"),
    Case("sampling at T = 1.5", 4, 16, temperature=1.5),
    Case("prompt lookup, loops with nothing to copy", 4, 6, drafter="lookup"),
    Case("custom tiny pair", 3, 16),
)


def _policy(case: Case) -> KPolicy:
    if case.policy == "heuristic":
        return KPolicy(case.k, "heuristic")
    if case.policy == "confidence":
        return KPolicy(case.k, stop_below=CONFIDENCE_STOP)
    return KPolicy(case.k)


def _target(eos_first: bool) -> LoadedModel:
    target = tiny_loaded(VOCAB, TARGET_SEED, logit_scale=8.0)
    if not eos_first:
        return target
    with torch.inference_mode():  # the token the prefill will choose becomes the end-of-text token
        first = int(target.model(input_ids=torch.tensor([PROMPT])).logits[0, -1].argmax())
    return tiny_loaded(VOCAB, TARGET_SEED, logit_scale=8.0, eos_token_id=first)


def _drafter(case: Case, target: LoadedModel):
    if case.drafter == "self":
        return ModelDrafter(tiny_llama(VOCAB, TARGET_SEED, logit_scale=8.0), name="the target's own weights")
    if case.drafter == "contrary":
        return ContraryDrafter(target)
    if case.drafter == "lookup":
        return PromptLookupDrafter()
    return ModelDrafter(tiny_llama(VOCAB, DRAFT_SEED, logit_scale=2.0), name="tiny draft")


@cache
def run(name: str) -> tuple[Trace, Trace | None]:
    """(speculative trace, plain baseline or None) of the case ``name``, recorded once per process."""
    case = next(c for c in CASES if c.name == name)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        target = _target(case.eos_first)
        ran = run_live(target, _drafter(case, target), list(PROMPT), _policy(case), case.max_new_tokens,
                       SamplingConfig(case.temperature), seed=0)
    finally:
        torch.set_num_threads(before)
    return ran.spec, ran.plain


NAMES = tuple(c.name for c in CASES)
