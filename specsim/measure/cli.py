"""Command line: run speculative decoding once and show what the target kept.

    python -m specsim.measure.cli --prompt "Write a haiku about rain." -k 4

Accepted draft tokens, rejected ones and the target's own +1 token are marked (colours on a
terminal, brackets otherwise), followed by the run's statistics and a plain-decoding baseline.
"""

from __future__ import annotations

import argparse
import sys

from specsim.core.defaults import (
    DEFAULT_DRAFTER,
    DEFAULT_K,
    DEFAULT_MAX_NEW_TOKENS,
    DEFAULT_TREE_DEPTH,
    DRAFT_MODEL,
    drafter_kind,
)
from specsim.core.engine import plain_generate
from specsim.core.model_checks import TokenizerMismatch
from specsim.core.models import ModelUnavailable, format_prompt
from specsim.core.trace import Trace
from specsim.liverun import ModelShelf, run_request
from specsim.measure import flags
from specsim.measure.costmodel import cost_model
from specsim.methods import DRAFTER_KINDS
from specsim.request import BadRequest, RunRequest, describe

GREEN, RED, BLUE, DIM, RESET = "\033[32m", "\033[9;31m", "\033[1;34m", "\033[2m", "\033[0m"


def marked_text(trace: Trace, colour: bool) -> str:
    """The generated text with accepted, rejected (struck out) and the target's own tokens marked: the prefill's
    first token and each loop's +1."""
    parts = []
    if trace.first is not None:
        parts.append(f"{BLUE}{trace.first.text}{RESET}" if colour else f"{{+{trace.first.text}+}}")
    for it in trace.iterations:
        for slot in it.slots:
            if slot.status == "accepted":
                parts.append(f"{GREEN}{slot.text}{RESET}" if colour else slot.text)
            elif slot.status == "rejected":
                parts.append(f"{RED}{slot.text}{RESET}" if colour else f"[-{slot.text}-]")
        if it.extra.token_id in it.emitted:
            parts.append(f"{BLUE}{it.extra.text}{RESET}" if colour else f"{{+{it.extra.text}+}}")
    return "".join(parts)


def legend(colour: bool) -> str:
    if colour:
        return (f"{GREEN}accepted draft{RESET}  {RED}rejected draft{RESET}  "
                f"{BLUE}target's own token (the prefill's first, each loop's +1){RESET}")
    return ("plain = accepted draft   [-x-] = rejected draft   "
            "{+x+} = target's own token (the prefill's first, each loop's +1)")


def statistics(spec: Trace, plain: Trace) -> list[str]:
    m = cost_model([spec], [plain])
    same = "identical" if spec.generated_ids == plain.generated_ids else "different (sampling)"
    settings = spec.settings
    return [
        f"drafter            {settings.draft}  ({'' if settings.tree else f'K = {settings.k}, '}{settings.dtype} on "
        f"{settings.device})",
        f"acceptance rate    {m.alpha:.3f}   ({spec.n_accepted} kept of {spec.n_checked} checked, "
        f"{spec.n_proposed} proposed)",
        f"tokens per loop    {m.tokens_per_loop:.2f}   over {len(spec.iterations)} loops",
        f"speculative        {m.spec_tokens_per_s:.1f} tokens/s   ({spec.n_generated} tokens)",
        f"plain decoding     {m.plain_tokens_per_s:.1f} tokens/s   ({plain.n_generated} tokens, {same})",
        f"speedup            {m.wall_clock_speedup:.2f}x on the wall clock, {m.speedup:.2f}x from the cost model "
        f"t / (K c + v + o) with median pass times: c = {m.draft_cost:.3f}, v = {m.verify_cost:.2f}, "
        f"o = {m.other_cost:.2f} target passes",
    ] + ([f"noise              {m.noise}: the wall clock is noise, not a result"] if m.noise else [])




FLAGS = {"k": "-k", "max_new_tokens": "--max-new-tokens", "temperature": "--temperature", "seed": "--seed",
         "top_k": "--top-k", "top_p": "--top-p", "min_p": "--min-p", "tree_nodes": "--tree",
         "tree_depth": "--tree-depth"}
"""How a refusal names each of the run request's numbers: by the flag that set it."""


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, RunRequest]:
    """The flags, and the run request they make (the request checks every range and names the flag at fault)."""
    parser = argparse.ArgumentParser(prog="python -m specsim.measure.cli", description=__doc__.splitlines()[0])
    parser.add_argument("--prompt", required=True, help="the user message (the chat template is applied)")
    parser.add_argument("-k", "--k", type=int, default=DEFAULT_K, help=f"draft tokens per loop: {describe('k')}")
    parser.add_argument("--drafter", type=drafter_kind, choices=DRAFTER_KINDS, default=DEFAULT_DRAFTER)
    flags.add_models(parser)
    parser.add_argument("--temperature", type=float, default=0.0,
                        help="0 = greedy; any T > 0 samples (a tiny T is computed exactly and picks the top token)")
    parser.add_argument("--top-p", type=float, default=None)
    parser.add_argument("--top-k", type=int, default=None, help="sample from the k most likely tokens only")
    parser.add_argument("--min-p", type=float, default=None,
                        help="sample from the tokens at least this share as likely as the top one only")
    parser.add_argument("--max-new-tokens", type=int, default=DEFAULT_MAX_NEW_TOKENS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tree", type=int, default=None, metavar="N",
                        help="draft a token tree of N guesses each loop instead of a chain of K: "
                             f"{describe('tree_nodes')}")
    parser.add_argument("--tree-depth", type=int, default=DEFAULT_TREE_DEPTH,
                        help=f"with --tree: the tree's deepest level, {describe('tree_depth')}")
    flags.add_machine(parser)
    args = parser.parse_args(argv)
    if args.drafter == DRAFT_MODEL and not args.draft:
        parser.error("--drafter model needs --draft PATH_OR_ID")
    try:
        request = RunRequest.checked(
            FLAGS, prompt=args.prompt, target=args.target, drafter=args.drafter, draft=args.draft or "",
            early_exit_layers=args.early_exit_layers, k=args.k, temperature=args.temperature, top_p=args.top_p,
            top_k=args.top_k, min_p=args.min_p, seed=args.seed, max_new_tokens=args.max_new_tokens, device=args.device,
            dtype=None if args.dtype == "auto" else args.dtype, tree_nodes=args.tree, tree_depth=args.tree_depth)
    except BadRequest as error:
        parser.error(str(error))
    return args, request


def main(argv: list[str] | None = None) -> int:
    args, request = parse_args(argv)
    flags.apply_threads(args.threads)
    shelf = ModelShelf()
    try:
        target = shelf.load(request)
    except (ModelUnavailable, TokenizerMismatch, ValueError) as error:
        print(f"python -m specsim.measure.cli: error: {error}", file=sys.stderr)
        return 2
    print(f"dtype: {target.dtype_reason}", file=sys.stderr)
    ids = format_prompt(target.tokenizer, request.prompt)
    context = getattr(target.model.config, "max_position_embeddings", None)
    if context and len(ids) + request.max_new_tokens > context:
        print(f"python -m specsim.measure.cli: error: the prompt is {len(ids)} tokens and --max-new-tokens is "
              f"{request.max_new_tokens}; together they exceed the target's context of {context} tokens",
              file=sys.stderr)
        return 2
    try:
        run = run_request(request.changed(prompt_ids=tuple(ids)), shelf)  # the live page's run, timed as it is
    except (ModelUnavailable, TokenizerMismatch, ValueError) as error:
        print(f"python -m specsim.measure.cli: error: {error}", file=sys.stderr)
        return 2
    spec = run.spec
    # the speculative run wrote nothing (end of text at once): a plain run to show beside it
    plain = run.plain or plain_generate(target, ids, request.max_new_tokens, request.sampling, request.seed)
    colour = sys.stdout.isatty()
    print(marked_text(spec, colour))
    print()
    print(legend(colour))
    print("\n".join(statistics(spec, plain)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
