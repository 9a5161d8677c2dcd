"""Every way this project decodes, registered once: name, label, how to build or run it, and where it is offered.

Each :class:`Method` is one row of :data:`METHODS`. The CLI (``--drafter``), the bench, the live page's
drafter choice, the variants comparison and the lesson's table of variants all read this table, so a
method added here shows up everywhere it is offered, and nowhere else needs an ``if`` over names.

- ``drafter`` names a drafter kind for the speculative loop (:func:`build_drafter`), offered by the CLI,
  the bench and, when ``live`` says how, the live page.
- ``run`` decodes one prompt greedily for the variants comparison (:mod:`specsim.measure.compare_variants`).
- ``lesson`` is its row in the variants table (extra cost, how it guesses, and where the lesson's own table says
  otherwise); the papers' reported speedups come from :mod:`specsim.core.published`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from specsim.core import defaults
from specsim.core.defaults import DRAFT_MODEL
from specsim.core.kpolicy import KPolicy
from specsim.core.models import LoadedModel
from specsim.core.paths import resolve
from specsim.core.published import (
    NVIDIA_MEDUSA_70B_SPEEDUP,
    NVIDIA_MEDUSA_SPEEDUP,
    SPEEDUPS,
)
from specsim.core.trace import Trace

if TYPE_CHECKING:
    import torch

    from specsim.core.drafters import Drafter
    from specsim.variants.medusa import MedusaHeads

CAUTION_LAYERS = 4  # the comparison's early-exit case: a very shallow draft that rarely agrees

VariantRun = tuple[Trace, int, str, object]
"""One greedy run for the comparison: (trace, extra parameters, training cost, details for the page)."""

Runner = Callable[[LoadedModel, list[int], int, "MedusaHeads | None"], VariantRun]
Builder = Callable[[LoadedModel, str, int], "Drafter"]  # (target, draft model id or folder, early-exit layers)


@dataclass(frozen=True)
class LessonRow:
    """A row of the variants table the pages show: this app's words, corrected where the lesson's table is wrong."""

    name: str  # the variant, with the paper that introduced it
    cost: str  # what it adds to plain decoding
    note: str  # how it guesses, and where it pays off
    departs: str = ""  # where the lesson's own table says otherwise ("" where it agrees), for the note under the table

@dataclass(frozen=True)
class Method:
    """One decoding method and everything the pages, CLI and bench need to know about it."""

    key: str  # its name in the comparison and its results ("draft_model", "lookahead", ...)
    label: str  # how tables and charts name it
    run: Runner  # one greedy run for the comparison
    build: Builder | None = None  # builds its drafter for a loaded target (its key is the drafter kind); None: not one
    live: str | None = None  # how the live page's drafter choice describes it; None: not offered there
    lesson: LessonRow | None = None  # its row in the lesson's table, with our correction; None: not in the table

    def claimed_speedup(self) -> str | None:
        """What the papers report for it (:mod:`specsim.core.published`), or None."""
        return "; ".join(s.claim for s in SPEEDUPS.get(self.key, ())) or None


# ---- the drafters ---------------------------------------------------------------------------
def _build_model(target: LoadedModel, draft: str, early_exit_layers: int) -> Drafter:
    from specsim.core.draft_loader import load_draft_model
    if not draft:
        raise ValueError("the model drafter needs a draft model: pass a hub id or a local folder")
    return load_draft_model(draft, target)


def _build_prompt_lookup(target: LoadedModel, draft: str, early_exit_layers: int) -> Drafter:
    from specsim.core.draft_loader import prompt_lookup_drafter
    return prompt_lookup_drafter(target)


def _build_early_exit(target: LoadedModel, draft: str, early_exit_layers: int) -> Drafter:
    from specsim.core.model_drafters import EarlyExitDrafter
    return EarlyExitDrafter(target.model, early_exit_layers)


# ---- the comparison's runs --------------------------------------------------------------------
def shipped_draft(folder: str, target: LoadedModel) -> tuple[Drafter, int, str]:
    """A draft shipped under assets/drafts (standalone or EAGLE): (drafter, extra parameters, training cost)."""
    from specsim.core.trained_drafters import make_drafter  # the distill branch's loader for shipped drafts

    drafter = make_drafter(resolve(folder), target.model, dtype=target.dtype, device=target.device)
    model = getattr(drafter, "model", None) or getattr(drafter, "draft", None)
    return drafter, _count(model) if model is not None else 0, "distilled from the target (see the distill README)"


def classic_draft(target: LoadedModel) -> tuple[Drafter, int, str]:
    """The classic draft model: ``defaults.CLASSIC_DRAFT`` (it ships in assets/drafts); an early-exit stand-in
    when that folder is missing (a checkout without it).

    Returns (drafter, extra parameters, training cost).
    """
    from specsim.core.model_drafters import EarlyExitDrafter
    if defaults.CLASSIC_DRAFT and Path(defaults.CLASSIC_DRAFT).is_dir():
        return shipped_draft(defaults.CLASSIC_DRAFT, target)
    drafter = EarlyExitDrafter(target.model, defaults.DEFAULT_EARLY_EXIT_LAYERS)
    drafter.name = f"stand-in, the draft folder {defaults.CLASSIC_DRAFT} is missing: {drafter.name}"
    return drafter, 0, "none (stand-in)"


def _count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def training_cost(heads: MedusaHeads) -> str:
    meta = heads.meta
    if "total_seconds" not in meta:
        return "unknown"
    return (f"{meta['total_seconds']:.0f} s on {meta.get('threads', '?')} CPU threads "
            f"({meta['answers']} answers, {meta['answer_tokens']} tokens, {meta['epochs']} epochs)")


def _heads(medusa_heads: MedusaHeads | None) -> MedusaHeads:
    from specsim.variants.medusa import MedusaHeads
    return medusa_heads if medusa_heads is not None else MedusaHeads.load()


def _run_plain(target, prompt_ids, max_new_tokens, medusa_heads) -> VariantRun:
    from specsim.core.engine import plain_generate
    return plain_generate(target, prompt_ids, max_new_tokens), 0, "none", None


def _run_draft_model(target, prompt_ids, max_new_tokens, medusa_heads) -> VariantRun:
    from specsim.core.engine import speculative_generate
    drafter, params, training = classic_draft(target)
    trace = speculative_generate(target, drafter, prompt_ids, KPolicy(defaults.DEFAULT_K), max_new_tokens)
    return trace, params, training, drafter.name


def _run_eagle(target, prompt_ids, max_new_tokens, medusa_heads) -> VariantRun:
    from specsim.core.engine import speculative_generate
    drafter, params, training = shipped_draft(defaults.EAGLE_DRAFT, target)
    trace = speculative_generate(target, drafter, prompt_ids, KPolicy(defaults.DEFAULT_K), max_new_tokens)
    return trace, params, training, drafter.name


def _run_prompt_lookup(target, prompt_ids, max_new_tokens, medusa_heads) -> VariantRun:
    from specsim.core.draft_loader import prompt_lookup_drafter
    from specsim.core.engine import speculative_generate
    trace = speculative_generate(target, prompt_lookup_drafter(target), prompt_ids, KPolicy(defaults.DEFAULT_K),
                                 max_new_tokens)
    return trace, 0, "none", None


def _run_lookahead(target, prompt_ids, max_new_tokens, medusa_heads) -> VariantRun:
    from specsim.variants.lookahead import lookahead_generate
    run = lookahead_generate(target, prompt_ids, max_new_tokens)
    return run.trace, 0, "none", run


def _run_medusa(target, prompt_ids, max_new_tokens, medusa_heads) -> VariantRun:
    from specsim.core.engine import speculative_generate
    from specsim.variants.medusa import MedusaDrafter
    heads = _heads(medusa_heads)
    trace = speculative_generate(target, MedusaDrafter(heads, target.model), prompt_ids, KPolicy(heads.n_heads),
                                 max_new_tokens)
    return trace, heads.extra_parameters(), training_cost(heads), None  # plain data only: it travels to a replica


def _run_medusa_tree(target, prompt_ids, max_new_tokens, medusa_heads) -> VariantRun:
    from specsim.variants.medusa_tree import medusa_tree_generate
    heads = _heads(medusa_heads)
    run = medusa_tree_generate(target, heads, prompt_ids, max_new_tokens)
    return run.trace, heads.extra_parameters(), training_cost(heads), run


def _run_early_exit(target, prompt_ids, max_new_tokens, medusa_heads) -> VariantRun:
    from specsim.core.engine import speculative_generate
    from specsim.core.model_drafters import EarlyExitDrafter
    drafter = EarlyExitDrafter(target.model, CAUTION_LAYERS)
    trace = speculative_generate(target, drafter, prompt_ids, KPolicy(defaults.DEFAULT_K), max_new_tokens)
    return trace, 0, "none", None


METHODS: tuple[Method, ...] = (
    Method("plain", "Plain greedy decoding", _run_plain),
    Method(DRAFT_MODEL, "Draft model", _run_draft_model, build=_build_model,
           live="a draft model (the bundled one also copies repeated text)", lesson=LessonRow(
               "Draft model (Leviathan et al.; Chen et al., 2023)",
               "A second, smaller model: its weights, its passes and its own KV cache",
               "The draft writes K guesses one after another and the target checks them in one pass. It must cut "
               "text into the target's tokens (a shared tokenizer); this app's default draft also copies text "
               "that repeats.")),
    Method("prompt_lookup", "Prompt lookup", _run_prompt_lookup, build=_build_prompt_lookup,
           live="prompt lookup (no second model)", lesson=LessonRow(
               "Copying from the input: prompt lookup (Saxena, 2023), LLMA (Yang et al., 2023)",
               "No extra weights: a string match over the text",
               "Guesses are spans copied from the prompt and the text so far (prompt lookup) or from reference "
               "documents sent with the request (LLMA). It pays off only where the output repeats its input. The "
               "one run here is prompt lookup.",
               "It is often presented as one method, inference with reference, with one speedup; two methods share "
               "the idea, and each reported figure belongs to its own setting.")),
    Method("eagle", "EAGLE head (one layer)", _run_eagle, lesson=LessonRow(
        "EAGLE (Li et al., 2024): a draft head on the target's features",
        "A small head trained for one target (one decoder layer here) that reads the target's hidden states",
        "It drafts from the target's own features rather than from text alone: EAGLE's bet is that this guesses "
        "better than a separate model of the same size (on this app's small target the one-layer head keeps fewer "
        "guesses than the two-layer draft; see below). EAGLE-2 drafts a tree shaped by the head's confidence; EAGLE-3 "
        "reads features from low, middle and high layers.")),
    Method("lookahead", "Lookahead (Jacobi)", _run_lookahead, lesson=LessonRow(
        "Lookahead decoding (Fu et al., 2024)",
        "No second model, but every pass carries a window of guesses and a pool of n-grams",
        "Each pass runs one Jacobi iteration over a whole window of guesses in parallel and checks n-grams that "
        "earlier iterations left in a pool; the kept n-grams are the speedup.",
        "It is often said to regenerate only the failed tokens; every pass recomputes the whole window.")),
    Method("medusa", "Medusa heads (chain)", _run_medusa),
    Method("medusa_tree", "Medusa heads (tree)", _run_medusa_tree, lesson=LessonRow(
        "Medusa (Cai et al., 2024)",
        "Extra decoding heads on the target, trained (Medusa-1 freezes the target; Medusa-2 also fine-tunes it)",
        "Head k guesses the token k places past the next one; their top candidates form a tree, checked in one "
        "pass with a tree attention mask. When sampling, Medusa's typical acceptance keeps more guesses but no "
        "longer samples exactly from the target.",
        f"NVIDIA's {NVIDIA_MEDUSA_SPEEDUP.figure} is often quoted for Llama 3.1 without its setting: it is "
        f"{NVIDIA_MEDUSA_SPEEDUP.setting}, and {NVIDIA_MEDUSA_70B_SPEEDUP.setting.split(' with ')[0]} gained "
        f"{NVIDIA_MEDUSA_70B_SPEEDUP.figure}. Typical acceptance, Medusa's sampling rule, is not lossless.")),
    Method("early_exit", f"Early exit ({CAUTION_LAYERS} layers)", _run_early_exit,
           build=_build_early_exit, live="early exit (the target's first layers)", lesson=LessonRow(
               "Early exit, or self-speculation (LayerSkip, Draft & Verify, Kangaroo)",
               "No second model: part of the target drafts, its first layers (LayerSkip; Kangaroo adds a small "
               "adapter) or the whole model with some layers skipped (Draft & Verify)",
               "Untrained, as here, the first layers guess poorly; trained for it, they draft well enough to pay.",
               "Lists of variants often leave it out, though it needs no second model (LayerSkip retrains the "
               "target for it).")),
)

VARIANTS = tuple(m.key for m in METHODS if m.key != "plain")  # what the comparison runs beside plain decoding
LABELS = {m.key: m.label for m in METHODS}
DRAFTER_KINDS = tuple(m.key for m in METHODS if m.build)  # the CLI's and the bench's --drafter choices
LIVE_DRAFTERS = {m.key: m.live for m in METHODS if m.build and m.live}  # the live page's choice


def variant_rows() -> list[dict]:
    """The variants table the pages show, before any run: what each variant costs, how it guesses, what papers
    report. Where common descriptions are wrong these rows say the right thing; :func:`departures` says where."""
    return [{"variant": m.lesson.name, "extra cost": m.lesson.cost, "how it guesses": m.lesson.note,
             "reported speedup (papers)": m.claimed_speedup() or "none reported"}
            for m in lesson_methods()]


def departures() -> str:
    """One sentence per row that corrects a common description of the variant, for the note under the table."""
    return " ".join(f"**{m.label}.** {m.lesson.departs}" for m in lesson_methods() if m.lesson.departs)


def method(key: str) -> Method:
    """The method named ``key`` in the comparison; a clear error for any other name."""
    for m in METHODS:
        if m.key == key:
            return m
    raise ValueError(f"unknown variant {key!r}; choose from {', '.join(m.key for m in METHODS)}")


def lesson_methods() -> tuple[Method, ...]:
    """The methods in the lesson's table of variants, in its order."""
    return tuple(m for m in METHODS if m.lesson is not None)


def build_drafter(
    kind: str, target: LoadedModel, draft: str = "", early_exit_layers: int = defaults.DEFAULT_EARLY_EXIT_LAYERS,
) -> Drafter:
    """One drafter of ``kind`` (one of :data:`DRAFTER_KINDS`) for ``target``."""
    for m in METHODS:
        if m.key == kind and m.build is not None:
            return m.build(target, draft, early_exit_layers)
    raise ValueError(f"unknown drafter kind {kind!r}; choose one of {', '.join(DRAFTER_KINDS)}")
