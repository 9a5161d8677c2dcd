"""The class queue's other jobs: measurements a page runs on the bundled target, done by a worker in class mode.

Five kinds, each a function of plain parameters that a worker (:mod:`specsim.classroom.worker`) runs:

- ``"verify_curve"``: the *Is verification free here?* page's v(n), timed on the worker's machine
  (:func:`specsim.measure.passcost.measure_pass_costs`), returned as a :class:`~specsim.measure.passcost.VerifyCurve`;
- ``"variants"``: the variants page's comparison on one demo prompt (:func:`specsim.measure.compare_variants.compare`)
and
  lookahead's Jacobi iterations, returned as a dict;
- ``"policies"``: *Under the hood*'s three K policies on one prompt
(:func:`specsim.lesson.kpolicy_runs.compare_policies`),
  returned as (plain trace, policy runs);
- ``"snippet"``: *Under the hood*'s transformers prompt-lookup snippet beside specsim's runs
  (:func:`specsim.measure.hf_assisted.snippet_check`), returned as a :class:`~specsim.measure.hf_assisted.SnippetCheck`;
- ``"domains"``: *In practice*'s acceptance by domain (:func:`specsim.lesson.domains.measure_domains`);
- ``"blockcheck"``: *Why the output is unchanged*'s whole-block check (:func:`specsim.lesson.blockcheck.run`: the
engine's
  loop on two tiny models), returned as a :class:`~specsim.lesson.blockcheck.BlockCheck`.

A class replica runs none of them itself: it loads no model (each of these pages' runs goes to a worker).

They travel like live runs (:mod:`specsim.classroom.jobs`): :func:`submit` returns an unguessable job id bound to the
session's token, :func:`specsim.classroom.jobs.status` says where the job is (its place in the queue, or running), and
:func:`progress` gives the fraction done and what is happening. :func:`specsim.classroom.jobs.cancel` takes a waiting
job off
the queue or stops a running one at its next progress report (a stopped measurement keeps nothing, as in-process).
:func:`result` gives the finished job's value, which RQ stored as the job's result (only workers write them).
Everything here goes through :mod:`specsim.classroom.jobs`' public interface.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from rq import Queue, get_current_job

from specsim.classroom import jobs, records, running
from specsim.request import RunRequest

KINDS = ("verify_curve", "variants", "policies", "snippet", "domains", "blockcheck")
CANCELLED = "Cancelled while it ran; a stopped measurement keeps nothing."


class Cancelled(RuntimeError):
    """Raised inside a task when its job was cancelled."""


# ---- what a worker runs -------------------------------------------------------------------------------------


def _target():
    return running.SHELF.target(RunRequest(prompt="."))  # the bundled target, loaded once per worker


def verify_curve(params: dict, progress: Callable[[float, str], None]):
    """v(n) on this machine: ``ns`` (default passcost.DEFAULT_NS), ``repeats`` rounds after a warm-up."""
    import torch

    from specsim.core.models import format_prompt
    from specsim.measure import passcost

    progress(0.05, "Loading the bundled target on a class worker")
    target = _target()
    ns = tuple(int(n) for n in params.get("ns", passcost.DEFAULT_NS))
    repeats = int(params.get("repeats", 5))
    progress(0.2, f"Timing target passes over 1 to {max(ns)} tokens on a class worker")
    costs = passcost.measure_pass_costs(
        target, ns=ns, repeats=repeats, warmup=1,
        on_round=lambda done, total: progress(0.2 + 0.8 * done / total, f"timing round {done} of {total}"))
    progress(1.0, "Done")
    return passcost.VerifyCurve.of(costs, len(format_prompt(target.tokenizer, passcost.CONTEXT_TEXT)),
                                   str(target.device), torch.get_num_threads())


def variants(params: dict, progress: Callable[[float, str], None]) -> dict:
    """The variants page's run on the demo prompt ``label`` with ``max_new`` tokens per variant."""
    from specsim.core.models import format_prompt
    from specsim.measure import compare_variants as cmp
    from specsim.variants.lookahead import jacobi_demo
    from specsim.variants.medusa import MedusaHeads

    label, max_new = params["label"], int(params["max_new"])
    chosen = tuple(params.get("variants", cmp.VARIANTS))
    progress(0.0, "Loading the bundled target on a class worker")
    target = _target()
    try:
        heads = MedusaHeads.load()
    except FileNotFoundError:
        heads = None  # the Medusa rows then report the missing file
    comparison = cmp.compare(target, cmp.DEMO_PROMPTS[label], max_new, chosen, heads, progress=progress,
                             rounds=int(params.get("rounds", cmp.ROUNDS)))
    jacobi, texts = [], []
    if "lookahead" in chosen:
        progress(0.98, "Jacobi iterations for one window")
        jacobi = jacobi_demo(target, format_prompt(target.tokenizer, cmp.DEMO_PROMPTS[label]))
        texts = [[target.tokenizer.decode([t]) for t in row] for row in jacobi]
    return {"comparison": comparison, "jacobi": jacobi, "jacobi_texts": texts}


def policies(params: dict, progress: Callable[[float, str], None]):
    """The three K policies, greedy, on ``prompt`` for ``max_new`` tokens, with the bundled target and ``draft``."""
    from specsim.core.models import format_prompt
    from specsim.lesson import kpolicy_runs

    progress(0.0, "Loading the bundled target and its draft on a class worker")
    request = RunRequest(prompt=".", draft=params["draft"])
    target = _target()
    ids = format_prompt(target.tokenizer, params["prompt"])
    steps = 1 + len(kpolicy_runs.POLICIES)
    return kpolicy_runs.compare_policies(target, lambda: running.SHELF.pair(request)[1], ids, int(params["max_new"]),
                                     on_run=lambda i, name: progress(i / steps, f"Run {i + 1} of {steps}: {name}"))


def snippet(params: dict, progress: Callable[[float, str], None]):
    """transformers' prompt lookup and plain generate beside specsim's, on ``prompt`` (K ``k``, ``max_new`` tokens)."""
    from specsim.core.models import format_prompt
    from specsim.measure.hf_assisted import snippet_check

    progress(0.0, "Loading the bundled target on a class worker")
    target = _target()
    progress(0.2, "Running transformers and specsim on a class worker")
    return snippet_check(target, format_prompt(target.tokenizer, params["prompt"]), int(params["k"]),
                         int(params["max_new"]))


def domains(params: dict, progress: Callable[[float, str], None]):
    """*In practice*'s acceptance by domain: the bundled pair on each domain's prompts (``k``, ``max_new``)."""
    from specsim.core import defaults
    from specsim.lesson import domains as by_domain

    progress(0.0, "Loading the bundled target and the default draft on a class worker")
    target, drafter = running.SHELF.pair(RunRequest(prompt=".", draft=defaults.DEFAULT_DRAFT))
    return by_domain.measure_domains(target, drafter, int(params["k"]), int(params["max_new"]),
                                     by_domain.domain_prompts(), progress=progress)


def blockcheck(params: dict, progress: Callable[[float, str], None]):
    """The whole-block check with ``runs`` seeded runs of the engine on two tiny models."""
    from specsim.lesson import blockcheck as check

    runs = int(params["runs"])
    progress(0.0, "Building the two tiny models on a class worker")
    return check.run(runs, on_run=lambda done: progress(done / runs, f"Run {done} of {runs}"))


RUNNERS = {"verify_curve": verify_curve, "variants": variants, "policies": policies, "snippet": snippet,
           "domains": domains, "blockcheck": blockcheck}


def run_task(job_id: str, kind: str, params: dict):
    """A worker's side of a task: its progress (with the job's heartbeat) and its value, which RQ stores as the
    job's result; or its cancellation."""
    conn = get_current_job().connection
    records.began(conn, job_id)
    heart = running.Heartbeat(conn, job_id)

    def progress(fraction: float, text: str) -> None:
        if heart.cancelled.is_set():
            raise Cancelled("cancelled")
        heart.report(fraction, text)

    heart.beat()
    heart.start()
    try:
        value = RUNNERS[kind](params, progress)
    except Cancelled:
        records.ended(conn, job_id, "cancelled", CANCELLED)
        return None
    except Exception as error:
        records.ended(conn, job_id, "failed", f"The measurement failed: {type(error).__name__}: {error}")
        raise
    finally:
        heart.stop()  # its last beat keeps the job alive while RQ stores the value
    records.ended(conn, job_id)
    return value


# ---- the page's side ------------------------------------------------------------------------------------------


def submit(redis_url: str, kind: str, params: dict, session_token: str, queue: str = records.QUEUE,
           max_queued: int = jobs.MAX_QUEUED) -> str:
    """Queue a task of ``kind`` for the session ``session_token``; its job id. JobError for an unknown kind,
    QueueFull past ``max_queued`` waiting jobs."""
    if kind not in KINDS:
        raise records.JobError(f"Unknown task {kind!r}; choose one of {', '.join(KINDS)}.")
    conn = records.connect(redis_url)
    jobs.check_room(conn, Queue(queue, connection=conn), max_queued)
    return records.new_job(conn, queue, run_task, (kind, json.loads(json.dumps(params))), session_token, kind=kind)


def progress(redis_url: str, job_id: str, session_token: str) -> tuple[float, str] | None:
    """The running task's last report (fraction done, what it is doing), or None before its first."""
    meta = records.record(redis_url, job_id, session_token)
    if "progress" not in meta:
        return None
    fraction, text = json.loads(meta["progress"])
    return float(fraction), str(text)


def result(redis_url: str, job_id: str, session_token: str):
    """The finished task's value (RQ's stored result); None while it has not finished (or after a failure or a
    cancel)."""
    return records.returned_value(redis_url, job_id, session_token)


__all__ = ["KINDS", "Cancelled", "blockcheck", "domains", "policies", "progress", "result", "run_task", "snippet",
           "submit", "variants", "verify_curve"]
