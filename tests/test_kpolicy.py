"""Adaptive K (issue 38): every K policy keeps greedy output token for token, K follows its rule, and the
heuristic schedule and the confidence stop draft exactly what transformers' assisted generation drafts."""

from __future__ import annotations

import importlib.util

import pytest
import torch

import specsim.core.kpolicy as kpolicy
from specsim.core.defaults import K_MAX
from specsim.core.drafters import PromptLookupDrafter
from specsim.core.engine import plain_generate, speculative_generate
from specsim.core.kpolicy import KPolicy
from specsim.core.loop_parts import eos_token_ids
from specsim.core.model_drafters import EarlyExitDrafter, ModelDrafter
from specsim.core.models import format_prompt
from specsim.core.prompt_sets import builtin_prompts
from specsim.core.sampling import SamplingConfig
from specsim.core.tiny import tiny_llama, tiny_loaded
from specsim.core.trace import Trace

pytestmark = pytest.mark.usefixtures("one_torch_thread")

POLICIES = [  # (k, schedule, stop_below)
    (3, "fixed", 0.0),
    (1, "heuristic", 0.0),
    (3, "heuristic", 0.0),
    (4, "fixed", 0.5),
    (2, "heuristic", 0.5),
]


def test_the_rules():
    fixed, heuristic = KPolicy(4), KPolicy(4, "heuristic")
    assert [fixed.next_k(4, 4, kept) for kept in range(5)] == [4] * 5
    assert heuristic.next_k(4, 4, 4) == 6 and heuristic.next_k(4, 4, 3) == 3 and heuristic.next_k(1, 1, 0) == 1
    assert heuristic.next_k(5, 2, 2) == 7  # a draft cut short (budget, confidence) and fully kept still grows K
    # issue 51: from K = 16 the schedule drafted 18; K never leaves the range the pages and the invariant path cover
    assert heuristic.next_k(15, 15, 15) == K_MAX and heuristic.next_k(K_MAX, K_MAX, K_MAX) == K_MAX
    # what has no meaning (K's range, 1 to K_MAX, is the run request's: specsim.request.RANGES)
    for bad in (dict(k=-1), dict(k=2, schedule="cosine"), dict(k=2, stop_below=1.5)):
        with pytest.raises(ValueError):
            KPolicy(**bad)


def follows_its_policy(trace: Trace, drafts_all: bool = True) -> None:
    """Each iteration's K is the one its policy chose from the iterations before, and each draft is as long as
    that K and the budget allow, unless the confidence stop ended it after a guess with q below the threshold."""
    s = trace.settings
    k, left = s.k, s.max_new_tokens - trace.n_prefilled  # the prefill chose the first token
    for it in trace.iterations:
        assert it.k_planned == k
        asked, qs = min(k, left - 1), [slot.q for slot in it.slots]
        assert it.k <= asked and all(q >= s.stop_below for q in qs[:-1])
        if it.k < asked and drafts_all:
            assert qs and qs[-1] < s.stop_below  # only the confidence stop drafts fewer
        if s.k_schedule == "heuristic":
            k = min(K_MAX, k + 2) if it.n_accepted == it.k else max(1, k - 1)
        left -= len(it.emitted)


# ---- tiny models ------------------------------------------------------------------------------------------

VOCAB, N_NEW = 48, 24
TINY_PROMPTS = ([3, 7, 11, 2, 9], [5, 6, 7, 8, 5, 6, 7, 8, 5, 6])


@pytest.fixture(scope="module")
def tiny_target():
    return tiny_loaded(VOCAB, seed=1, logit_scale=4.0)


def tiny_drafters(target):
    return {
        "self": ModelDrafter(target.model),  # every guess kept: K grows under the heuristic
        "random": ModelDrafter(tiny_llama(VOCAB, seed=2, logit_scale=4.0)),  # almost every guess rejected
        "early_exit": EarlyExitDrafter(target.model, 1),
        "copying": ModelDrafter(tiny_llama(VOCAB, seed=2, logit_scale=4.0), copy_from=PromptLookupDrafter(3, 2)),
        "prompt_lookup": PromptLookupDrafter(),
    }


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: f"{p[1]}-k{p[0]}-stop{p[2]}")
def test_tiny_greedy_identity_and_the_rule(tiny_target, policy):
    k, schedule, stop_below = policy
    for prompt in TINY_PROMPTS:
        reference = plain_generate(tiny_target, prompt, N_NEW).generated_ids
        for name, drafter in tiny_drafters(tiny_target).items():
            trace = speculative_generate(tiny_target, drafter, prompt,
                                         KPolicy(k, schedule=schedule, stop_below=stop_below), N_NEW)
            assert trace.generated_ids == reference, (name, prompt)
            follows_its_policy(trace, drafts_all=name != "prompt_lookup")


def test_the_rules_do_something(tiny_target):
    """Not vacuous: the heuristic raises and lowers K, and the confidence stop ends drafts early."""
    drafters = tiny_drafters(tiny_target)
    grows = speculative_generate(tiny_target, drafters["self"], TINY_PROMPTS[0], KPolicy(1, schedule="heuristic"),
                                 N_NEW)
    assert [it.k_planned for it in grows.iterations][:4] == [1, 3, 5, 7]
    mixed = speculative_generate(tiny_target, drafters["early_exit"], TINY_PROMPTS[0],
                                 KPolicy(3, schedule="heuristic"), N_NEW)
    steps = {b.k_planned - a.k_planned for a, b in zip(mixed.iterations, mixed.iterations[1:], strict=False)}
    assert {2, -1} <= steps
    stopped = speculative_generate(tiny_target, drafters["early_exit"], TINY_PROMPTS[0], KPolicy(4, stop_below=0.5),
                                   N_NEW)
    assert any(0 < it.k < 4 for it in stopped.iterations[:-1])
    assert stopped.settings.k_schedule == "fixed" and stopped.settings.stop_below == 0.5


def test_the_rule_check_catches_a_wrong_schedule(tiny_target, monkeypatch):
    monkeypatch.setattr(kpolicy.KPolicy, "next_k", lambda self, k, proposed, kept: k + 1 if kept == proposed else k)
    trace = speculative_generate(tiny_target, EarlyExitDrafter(tiny_target.model, 1), TINY_PROMPTS[0],
                                 KPolicy(3, schedule="heuristic"), N_NEW)
    with pytest.raises(AssertionError):
        follows_its_policy(trace)


def test_fixed_is_the_default(tiny_target):
    drafter = EarlyExitDrafter(tiny_target.model, 1)
    default = speculative_generate(tiny_target, drafter, TINY_PROMPTS[0], KPolicy(3), N_NEW,
                                   sampling=SamplingConfig(0.9), seed=5)
    fixed = speculative_generate(tiny_target, drafter, TINY_PROMPTS[0], KPolicy(3, schedule="fixed", stop_below=0.0),
                                 N_NEW, sampling=SamplingConfig(0.9), seed=5)
    def strip(trace: Trace) -> list:
        return [(it.emitted, [(s.token_id, s.q, s.p, s.draw) for s in it.slots]) for it in trace.iterations]

    assert strip(default) == strip(fixed) and all(it.k_planned == 3 for it in default.iterations)


# ---- the bundled target -------------------------------------------------------------------------------------

BUNDLED_NEW = 16


def test_bundled_greedy_identity(default_target):
    """The target the app runs, each adaptive policy with a good and a poor drafter, prompts rotated."""
    prompts = [format_prompt(default_target.tokenizer, text) for text in builtin_prompts(3)]
    references = [plain_generate(default_target, ids, BUNDLED_NEW).generated_ids for ids in prompts]
    drafters = [EarlyExitDrafter(default_target.model, 26), PromptLookupDrafter()]
    for i, (k, schedule, stop_below) in enumerate(POLICIES[1:]):
        for j, drafter in enumerate(drafters):
            n = (i + j) % len(prompts)
            trace = speculative_generate(default_target, drafter, prompts[n],
                                         KPolicy(k, schedule=schedule, stop_below=stop_below), BUNDLED_NEW)
            assert trace.generated_ids == references[n], (drafter.name, k, schedule, stop_below)
            follows_its_policy(trace, drafts_all=j == 0)


def transformers_drafts(target, assistant, ids: list[int], k: int, n_new: int, schedule: str, threshold: float,
                        monkeypatch) -> tuple[list[int], list[tuple[int, int]]]:
    """transformers' greedy assisted generation; per iteration (its num_assistant_tokens, candidates drafted)."""
    from transformers.generation.candidate_generator import AssistedCandidateGenerator

    seen: list[tuple[int, int]] = []
    original = AssistedCandidateGenerator.get_candidates

    def spy(self, input_ids, **kwargs):
        planned = int(self.num_assistant_tokens)
        candidates, logits = original(self, input_ids, **kwargs)
        seen.append((planned, candidates.shape[1] - input_ids.shape[1]))
        return candidates, logits

    monkeypatch.setattr(AssistedCandidateGenerator, "get_candidates", spy)
    config = assistant.generation_config
    config.num_assistant_tokens, config.num_assistant_tokens_schedule = k, schedule
    config.assistant_confidence_threshold = threshold  # without scikit-learn transformers keeps it fixed
    eos = sorted(eos_token_ids(target))
    input_ids = torch.tensor([ids])
    with torch.inference_mode():
        out = target.model.generate(input_ids, attention_mask=torch.ones_like(input_ids), max_new_tokens=n_new,
                                    do_sample=False, num_beams=1, eos_token_id=eos, pad_token_id=eos[0],
                                    assistant_model=assistant)
    return out[0, len(ids):].tolist(), seen


@pytest.mark.parametrize(("schedule", "stop_below"), [("heuristic", 0.5), ("constant", 0.5)])
def test_the_same_drafts_as_transformers(bundled_target, monkeypatch, schedule, stop_below):
    """In float32 (see test_engine_greedy), (K, tokens drafted) of every iteration equals transformers' own;
    this prompt and early exit after 26 of 30 layers make K rise and fall and the confidence stop cut drafts.
    transformers' first pass reads the prompt and the first guesses together, where specsim's prefill chooses the
    first token alone, so transformers starts from the prompt and that token: then both loops draft from the same
    contexts."""
    if importlib.util.find_spec("sklearn") is not None:
        pytest.skip("with scikit-learn installed transformers retunes the confidence threshold during the run")
    ids = format_prompt(bundled_target.tokenizer, builtin_prompts(5)[4])
    drafter = EarlyExitDrafter(bundled_target.model, 26)
    ours = speculative_generate(bundled_target, drafter, ids,
                                KPolicy(2, "heuristic" if schedule == "heuristic" else "fixed", stop_below),
                                BUNDLED_NEW)
    tokens, theirs = transformers_drafts(bundled_target, drafter.model, [*ids, ours.first.token_id], 2,
                                         BUNDLED_NEW - 1, schedule, stop_below, monkeypatch)
    assert list(ours.generated_ids[1:]) == tokens
    assert [(it.k_planned, it.k) for it in ours.iterations] == theirs
    assert any(k < planned for planned, k in theirs[:-1])  # the confidence stop cut a draft
    if schedule == "heuristic":
        assert len({planned for planned, _ in theirs}) > 2  # K moved


def test_what_transformers_does_by_default_is_what_the_installed_transformers_does():
    """The app says transformers drafts up to 20 guesses on a constant schedule with a 0.4 confidence stop by default:
    read from the installed GenerationConfig, so a transformers release that changes them fails here."""
    from transformers import GenerationConfig

    from specsim.core.kpolicy import CONFIDENCE_STOP, TRANSFORMERS_DEFAULTS

    defaults = GenerationConfig._get_default_generation_params()
    assert {name: defaults[name] for name in TRANSFORMERS_DEFAULTS} == TRANSFORMERS_DEFAULTS
    assert TRANSFORMERS_DEFAULTS["assistant_confidence_threshold"] == CONFIDENCE_STOP
    assert TRANSFORMERS_DEFAULTS["num_assistant_tokens_schedule"] != "heuristic"
