"""Acceptance depends on the domain: one draft/target pair on code, prose and text that repeats its input.

The lesson says acceptance is higher for structured text such as code. Here that is measured, not
assumed: the same pair runs greedily on prompts of each domain, and acceptance (kept over checked
proposals) and tokens per loop are pooled per domain. Also the draft's vocabulary coverage, which
decides which tokens it can propose at all (the shared-tokenizer requirement).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from specsim.core.kpolicy import KPolicy
from specsim.core.prompt_sets import heldout_items
from specsim.core.trace import Trace, pooled_acceptance_rate, pooled_tokens_per_pass
from specsim.measure.proportion import wilson_interval

TOKENS_PER_PROMPT = 24  # the In practice page's measurement, and its recording

ECHO_PROMPTS = (
    "Repeat this sentence exactly, three times: The quick brown fox jumps over the lazy dog near the quiet river bank.",
    "Copy this list back to me word for word: apples, pears, plums, cherries, grapes, lemons, limes, oranges.",
)


def domain_prompts(per_domain: int = 2) -> dict[str, list[str]]:
    """Code and prose prompts from the held-out set (never trained on), and prompts that ask for an echo."""
    held = heldout_items()
    pick = {name: [p["prompt"] for p in held if p["domain"] == name][:per_domain] for name in ("code", "prose")}
    return {"code": pick["code"], "prose": pick["prose"], "echo": list(ECHO_PROMPTS[:per_domain])}


@dataclass(frozen=True)
class DomainResult:
    """One domain's pooled figures."""

    domain: str
    prompts: int
    accepted: int
    checked: int
    tokens: int
    loops: int
    alpha: float  # Trace.acceptance_rate, pooled over the domain's runs
    tokens_per_loop: float  # Trace.tokens_per_pass, pooled likewise
    copied_kept: int = 0  # kept guesses that were copied from earlier in the text, not the draft model's own


def pool(domain: str, traces: Sequence[Trace]) -> DomainResult:
    """Accepted over checked proposals and tokens over loops, summed over a domain's runs."""
    return DomainResult(domain=domain, prompts=len(traces), accepted=sum(t.n_accepted for t in traces),
                        checked=sum(t.n_checked for t in traces), tokens=sum(t.n_generated for t in traces),
                        loops=sum(t.target_passes for t in traces), alpha=pooled_acceptance_rate(traces),
                        tokens_per_loop=pooled_tokens_per_pass(traces),
                        copied_kept=sum(s.copied and s.status == "accepted"
                                        for t in traces for it in t.iterations for s in it.slots))


def _prompt_count(results: Sequence[DomainResult]) -> str:
    counts = sorted({r.prompts for r in results})
    return " or ".join(str(n) for n in counts) + (" prompt" if counts == [1] else " prompts")


def ranking_sentence(results: Sequence[DomainResult], tokens_per_prompt: int) -> str:
    """The domains' highest and lowest acceptance, on how many prompts, and which neighbours in the ranking these runs
    cannot tell apart (their 95 % Wilson intervals on kept ÷ checked overlap; the counts: :func:`counts_sentence`)."""
    ranked = sorted(results, key=lambda r: r.alpha, reverse=True)
    intervals = {r.domain: wilson_interval(r.accepted, r.checked) for r in ranked}
    top, bottom = ranked[0], ranked[-1]
    text = (f"Highest acceptance: **{top.domain}** at {top.alpha:.0%} ({top.tokens_per_loop:.2f} tokens per loop); "
            f"lowest: **{bottom.domain}** at {bottom.alpha:.0%} ({bottom.tokens_per_loop:.2f}), on "
            f"{_prompt_count(ranked)} of up to {tokens_per_prompt} tokens a domain.")
    ties = [(a.domain, b.domain) for a, b in zip(ranked, ranked[1:], strict=False)
            if a.checked and b.checked and intervals[b.domain][1] >= intervals[a.domain][0]]
    if ties and len(ties) == len(ranked) - 1:
        text += (" Runs this small do not separate the domains: each one's 95 % interval overlaps the next one's, so "
                 "they neither confirm the expectations above nor refute them. Measure on more prompts before "
                 "ranking them.")
    elif ties:
        text += (" These runs do not separate " + " nor ".join(f"{a} from {b}" for a, b in ties)
                 + ": their intervals overlap, so measure on more prompts before ranking them.")
    return text


def counts_sentence(results: Sequence[DomainResult]) -> str:
    """Each domain's kept and checked guesses with a 95 % Wilson interval on kept ÷ checked (for "How this was
    measured")."""
    parts = []
    for r in sorted(results, key=lambda r: r.alpha, reverse=True):
        low, high = wilson_interval(r.accepted, r.checked)
        span = f"95 % interval {low:.0%}–{high:.0%}" if r.checked else "no guess checked"
        parts.append(f"{r.domain} kept {r.accepted} of {r.checked} checked guesses ({span})")
    return ("; ".join(parts) + " (the intervals treat guesses as independent, so if anything they are too "
            "narrow).")


def tau_sentence(results: Sequence[DomainResult]) -> str:
    """Why a domain with the higher α can show the lower τ, from the counts; empty when the two orders agree.

    A loop writes the guesses it keeps and one token of the target's, so τ = 1 + kept ÷ loops, less what the runs'
    last loops could not write: a loop that reaches the end of the text or the token budget writes no token after
    it. Tokens here count the prefill's first token, one a prompt, which no loop wrote.
    """
    pairs = [(a, b) for a in results for b in results if a.alpha > b.alpha and a.tokens_per_loop < b.tokens_per_loop]
    if not pairs:
        return ""
    a, b = max(pairs, key=lambda p: p[0].alpha - p[1].alpha)
    lost = {r.domain: max(0, r.accepted + r.loops - (r.tokens - r.prompts)) for r in (a, b)}
    text = (f"{a.domain.capitalize()} has the higher α but not the higher τ because τ is one plus the guesses kept "
            "per loop (α times the guesses a loop checks, up to its first refusal), less any token a run's "
            "last loop could not write at the end of the text or the token budget: "
            f"{a.domain} kept {a.accepted / a.loops:.2f} guesses a loop against {b.domain}'s "
            f"{b.accepted / b.loops:.2f}")
    if lost[a.domain] > lost[b.domain]:
        text += f", but lost {lost[a.domain]} tokens that way in its {a.loops} loops."
    else:
        text += "."
    return text


def copied_sentence(results: Sequence[DomainResult]) -> str:
    """How much of each domain's acceptance came from copying repeated text rather than the draft model."""
    parts = [f"{r.domain} {r.copied_kept} of {r.accepted}" for r in results if r.accepted]
    if not parts:
        return "No guess was kept, copied or drafted."
    return "Of the kept guesses, copies of earlier text: " + ", ".join(parts) + "."


def measure_domains(target, drafter, k: int, max_new_tokens: int, prompts: Mapping[str, Sequence[str]],
                    progress: Callable[[float, str], None] | None = None) -> list[DomainResult]:
    """Run the pair greedily on every prompt; one pooled result per domain, in the order given."""
    from specsim.core.engine import speculative_generate
    from specsim.core.models import format_prompt

    total = sum(len(v) for v in prompts.values())
    done, results = 0, []
    for domain, texts in prompts.items():
        traces = []
        for text in texts:
            if progress is not None:
                progress(done / total, f"{domain}: {text[:50]}…")
            traces.append(speculative_generate(target, drafter, format_prompt(target.tokenizer, text), KPolicy(k),
                                               max_new_tokens))
            done += 1
        results.append(pool(domain, traces))
    return results


@dataclass(frozen=True)
class VocabCoverage:
    """Which of the target's token ids a reduced-vocabulary draft can propose."""

    draft_vocab: int
    target_vocab: int
    covered_in_text: float | None  # share of a text's target tokens the draft could have proposed


def vocab_coverage(draft_folder: Path, token_ids: Sequence[int] = ()) -> VocabCoverage | None:
    """Read a distilled draft's vocabulary (draft.json, id_map.json); None for a folder without one."""
    try:
        meta = json.loads((draft_folder / "draft.json").read_text(encoding="utf-8"))
        id_map = set(json.loads((draft_folder / "id_map.json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None
    covered = sum(1 for t in token_ids if t in id_map) / len(token_ids) if token_ids else None
    return VocabCoverage(draft_vocab=len(id_map), target_vocab=int(meta["target_vocab"]), covered_in_text=covered)


@dataclass(frozen=True)
class RecordedDomains:
    """Acceptance by domain measured once (``python -m specsim.lesson.domains --save``) and shipped with the app:
    *In practice* shows it until the learner measures."""

    results: list[DomainResult]
    machine: str
    when: str
    k: int
    max_new_tokens: int


def to_json(results: Sequence[DomainResult], machine: str, when: str, k: int, max_new_tokens: int) -> str:
    from dataclasses import asdict

    return json.dumps({"machine": machine, "when": when, "k": k, "max_new_tokens": max_new_tokens,
                       "results": [asdict(r) for r in results]}, indent=1)


def load_recorded(path: Path) -> RecordedDomains | None:
    """The recording at ``path``, or None when it is missing or unreadable (the page then waits for the button)."""
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        return RecordedDomains([DomainResult(**r) for r in d["results"]], str(d["machine"]), str(d["when"]),
                               int(d["k"]), int(d["max_new_tokens"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m specsim.lesson.domains [--save]``: measure acceptance by domain as *In practice* does (the bundled
    pair, greedy, the default K), print it, and with ``--save`` write the recording the page shows first."""
    import argparse
    import time

    from specsim.core import defaults
    from specsim.core.draft_loader import load_draft_model
    from specsim.core.models import load_bundled_target
    from specsim.core.paths import DOMAINS_RECORDED
    from specsim.measure.compare_variants import cpu_name

    parser = argparse.ArgumentParser(prog="python -m specsim.lesson.domains", description=main.__doc__)
    parser.add_argument("--save", action="store_true", help=f"write {DOMAINS_RECORDED}")
    args = parser.parse_args(argv)
    target = load_bundled_target()
    drafter = load_draft_model(defaults.DEFAULT_DRAFT, target)
    results = measure_domains(target, drafter, defaults.DEFAULT_K, TOKENS_PER_PROMPT, domain_prompts())
    print(ranking_sentence(results, TOKENS_PER_PROMPT))
    if args.save:
        DOMAINS_RECORDED.parent.mkdir(parents=True, exist_ok=True)
        DOMAINS_RECORDED.write_text(to_json(results, cpu_name(), time.strftime("%Y-%m-%d"), defaults.DEFAULT_K,
                                            TOKENS_PER_PROMPT), encoding="utf-8")
        print(f"wrote {DOMAINS_RECORDED}")


if __name__ == "__main__":
    main()
