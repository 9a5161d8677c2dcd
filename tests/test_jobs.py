"""The class queue (issue 40): live runs as jobs on RQ over a real redis-server, served by real worker processes
(``python -m specsim.classroom.worker``) running tiny saved models with prompt lookup, so each job takes a moment."""

from __future__ import annotations

import re
import signal
import subprocess
import time
import uuid

import pytest

from specsim.classroom import jobs, records
from specsim.core.draft_loader import prompt_lookup_drafter
from specsim.core.models import load_model
from specsim.liverun import SPECULATIVE, run_live
from specsim.request import RunRequest
from tests.conftest import heartbeat_stale_at, start_worker, stop_process
from tests.local_models import save_tiny_model

WAIT_S = 90  # a worker's start (torch, transformers) on a busy machine, then a job of a moment


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    """A tiny target (quick jobs) and a wider, deeper one without end-of-text (jobs long enough to interrupt)."""
    root = tmp_path_factory.mktemp("queue-models")
    return save_tiny_model(root / "quick", seed=4), save_tiny_model(root / "slow", seed=5, hidden=384, layers=8,
                                                                     eos=False)


def _worker(redis_url: str, queue: str, log) -> subprocess.Popen:
    return start_worker(redis_url, queue, log)


def _stop(worker: subprocess.Popen) -> None:
    stop_process(worker, 1)


class Served:
    """A queue of its own and the worker serving it; a worker that died (one test kills it) is started again."""

    def __init__(self, redis_url: str, log):
        self.redis_url, self.log, self.name = redis_url, log, f"test-{uuid.uuid4().hex[:8]}"
        self.process = _worker(redis_url, self.name, log)

    @property
    def queue(self) -> str:
        if self.process.poll() is not None:
            self.process = _worker(self.redis_url, self.name, self.log)
        return self.name


@pytest.fixture(scope="module")
def served(redis_url, tmp_path_factory):
    with (tmp_path_factory.mktemp("worker") / "worker.log").open("w") as log:
        worker = Served(redis_url, log)
        yield worker
        _stop(worker.process)


def _request(target, words: str = "the quick brown fox jumps over the lazy dog . the quick brown", **changes):
    ids = [int(i) for i in load_model(str(target), device="cpu", dtype="float32", local=True)
           .tokenizer(words)["input_ids"]]
    base = RunRequest(prompt_ids=tuple(ids), target=str(target), target_local=True, drafter="prompt_lookup", k=3,
                      max_new_tokens=4, device="cpu", dtype="float32", invariant=False)
    return base.changed(**changes)


def _wait(redis_url, job_id, token, until=("finished", "failed", "cancelled"), timeout=WAIT_S) -> jobs.JobStatus:
    deadline = time.monotonic() + timeout
    while True:
        now = jobs.status(redis_url, job_id, token)
        if now.state in until or time.monotonic() > deadline:
            return now
        time.sleep(0.05)


def test_a_queued_run_writes_what_running_it_here_writes(redis_url, served, models_dir, one_torch_thread):
    request = _request(models_dir[0])
    token = uuid.uuid4().hex
    job_id = jobs.submit(redis_url, request, token, queue=served.queue)
    done = _wait(redis_url, job_id, token)
    assert done.state == "finished", done.message
    got = jobs.result(redis_url, job_id, token)
    target = load_model(str(models_dir[0]), device="cpu", dtype="float32", invariant=False, local=True)
    here = run_live(target, prompt_lookup_drafter(target), list(request.prompt_ids), request.kpolicy,
                    request.max_new_tokens, request.sampling, request.seed)
    assert not got.cached and got.run.stopped_in is None
    assert got.run.spec.generated_ids == here.spec.generated_ids
    assert got.run.plain.generated_ids == here.plain.generated_ids
    assert [it.emitted for it in got.run.spec.iterations] == [it.emitted for it in here.spec.iterations]
    # issue 52, item 4: the record is the RQ job's meta and the traces its stored result, no parallel hash or key
    from rq.job import Job

    conn = records.connect(redis_url)
    job = Job.fetch(job_id, connection=conn)
    assert job.meta["queue"] == served.queue and job.meta["token"] != token and "began" in job.meta
    assert job.return_value()["spec"]["generated_ids"] == list(got.run.spec.generated_ids)
    assert conn.type(f"specsim:job:{job_id}") == b"none" and not conn.exists(f"specsim:job:{job_id}:result")
    # the iterations arrived one by one, speculative run first, then its plain baseline
    reports = jobs.iterations(redis_url, job_id, token)
    spec = [r.iteration for r in reports if r.phase == SPECULATIVE]
    assert spec == list(got.run.spec.iterations)
    assert len(reports) == len(got.run.spec.iterations) + len(got.run.plain.iterations)
    assert jobs.iterations(redis_url, job_id, token, start=len(spec)) == reports[len(spec):]


def test_the_same_request_again_comes_from_the_cache_and_another_seed_does_not(redis_url, served, models_dir):
    from rq import Queue
    from rq.job import Job

    request = _request(models_dir[0], "the lazy dog runs away . the lazy dog runs")
    token = uuid.uuid4().hex
    first = jobs.submit(redis_url, request, token, queue=served.queue)
    assert _wait(redis_url, first, token).state == "finished"
    assert not jobs.status(redis_url, first, token).cached
    again = jobs.submit(redis_url, request, token, queue=served.queue)
    now = jobs.status(redis_url, again, token)
    assert now.state == "finished" and now.cached  # answered at once
    answer = Job.fetch(again, connection=records.connect(redis_url))  # an RQ job that carries the record and the result
    assert answer.started_at is None and again not in Queue(served.queue, connection=records.connect(redis_url)).job_ids
    a, b = jobs.result(redis_url, first, token), jobs.result(redis_url, again, token)
    assert b.cached and b.run.spec == a.run.spec and b.run.plain == a.run.plain
    assert (b.recorded_at, b.machine) == (a.recorded_at, a.machine)
    other = jobs.submit(redis_url, request.changed(seed=1), token, queue=served.queue)
    assert not jobs.status(redis_url, other, token).cached
    assert _wait(redis_url, other, token).state == "finished"
    assert not jobs.result(redis_url, other, token).cached


def test_another_session_can_neither_read_nor_cancel_a_job(redis_url, models_dir):
    queue = f"unserved-{uuid.uuid4().hex[:8]}"  # no worker: the job waits
    mine, theirs = uuid.uuid4().hex, uuid.uuid4().hex
    job_id = jobs.submit(redis_url, _request(models_dir[0], "fox and dog"), mine, queue=queue)
    assert len(job_id) >= 20 and job_id != jobs.submit(redis_url, _request(models_dir[0], "fox and dog"), mine,
                                                       queue=queue)
    for call in (jobs.status, jobs.iterations, jobs.result, jobs.cancel):
        with pytest.raises(records.NotYourJob) as refused:
            call(redis_url, job_id, theirs)
        with pytest.raises(records.NotYourJob) as unknown:
            call(redis_url, job_id[:-2] + "xx", mine)
        assert str(refused.value) == str(unknown.value)  # nothing tells another session the job exists
    assert jobs.status(redis_url, job_id, mine).state == "queued"


def test_cancelling_a_waiting_job_takes_it_off_the_queue(redis_url, models_dir):
    from rq import Queue

    queue = f"unserved-{uuid.uuid4().hex[:8]}"
    token = uuid.uuid4().hex
    first = jobs.submit(redis_url, _request(models_dir[0], "home and away"), token, queue=queue)
    second = jobs.submit(redis_url, _request(models_dir[0], "away and home"), token, queue=queue)
    assert (jobs.status(redis_url, first, token).place, jobs.status(redis_url, second, token).place) == (1, 2)
    assert "no worker" in jobs.status(redis_url, first, token).message  # a wait nobody serves says so
    assert jobs.cancel(redis_url, first, token) == "cancelled"
    assert jobs.status(redis_url, first, token).state == "cancelled"
    assert Queue(queue, connection=records.connect(redis_url)).job_ids == [second]
    assert jobs.status(redis_url, second, token).place == 1
    assert jobs.result(redis_url, first, token) is None


def test_a_full_queue_refuses_with_a_time_to_try_again(redis_url, models_dir):
    queue = f"unserved-{uuid.uuid4().hex[:8]}"
    token = uuid.uuid4().hex
    for words in ("the dog", "the fox"):
        jobs.submit(redis_url, _request(models_dir[0], words), token, queue=queue, max_queued=2)
    with pytest.raises(jobs.QueueFull) as full:
        jobs.submit(redis_url, _request(models_dir[0], "the home"), token, queue=queue, max_queued=2)
    found = re.search(r"the class queue is full .*try again in ~(\d+) s", str(full.value), re.IGNORECASE)
    assert found and int(found[1]) > 0, str(full.value)
    jobs.submit(redis_url, _request(models_dir[0], "the home"), token, queue=queue, max_queued=3)  # room again


def _running_with_iterations(redis_url, job_id, token) -> jobs.JobStatus:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        now = jobs.status(redis_url, job_id, token)
        if now.state != "queued" and (now.state != "running" or now.iterations):
            return now
        time.sleep(0.02)
    return now


def test_cancelling_a_running_job_stops_it_and_keeps_what_it_recorded(redis_url, served, models_dir):
    token = uuid.uuid4().hex
    request = _request(models_dir[1], max_new_tokens=256)
    job_id = jobs.submit(redis_url, request, token, queue=served.queue)
    assert _running_with_iterations(redis_url, job_id, token).state == "running"
    assert jobs.cancel(redis_url, job_id, token) == "stopping"
    assert _wait(redis_url, job_id, token).state == "finished"
    run = jobs.result(redis_url, job_id, token).run
    assert run.stopped_in is not None and run.plain is None
    assert 0 < run.spec.n_generated < request.max_new_tokens and run.spec.stop_reason == "cancelled"
    assert jobs.cached_run(records.connect(redis_url), request) is None  # a cancelled run is not the class's to reuse


def _kill(served, redis_url: str, job_id: str) -> float:
    """Kill the worker running ``job_id``; return when its heartbeat stops counting, at the latest."""
    served.process.send_signal(signal.SIGKILL)
    served.process.wait()
    return heartbeat_stale_at(records.connect(redis_url), job_id, time.monotonic())


def _first_poll_after(redis_url, job_id, token, stale_at: float) -> jobs.JobStatus:
    """Poll as a page does until a poll begins after ``stale_at`` (or one already says the run is no longer running):
    what the dead worker's run looks like to the first page that asks once its heartbeat is stale. Checked so, not by
    a bound in seconds: how soon a poll comes on a loaded machine is the machine's, what it finds is the code's."""
    deadline = stale_at + WAIT_S
    while True:
        began = time.monotonic()
        now = jobs.status(redis_url, job_id, token)
        if began > stale_at or now.state != "running" or began > deadline:
            return now
        time.sleep(0.02)


def test_a_worker_killed_mid_job_puts_the_run_back_and_another_worker_finishes_it(redis_url, served, models_dir):
    """Issue 52: a dead worker costs a wait, not the run: the first poll once its heartbeat is stale says the run was
    put back at the front of the queue, and the next worker (the supervisor restarts it) runs it to the end."""
    token = uuid.uuid4().hex
    request = _request(models_dir[1], "dog runs home", max_new_tokens=256)
    job_id = jobs.submit(redis_url, request, token, queue=served.queue)
    assert _running_with_iterations(redis_url, job_id, token).state == "running"
    back = _first_poll_after(redis_url, job_id, token, _kill(served, redis_url, job_id))
    assert back.state == "queued" and back.message.startswith(jobs.RETRIED) and back.attempt == 2, back
    assert jobs.iterations(redis_url, job_id, token) == []  # the dead run's progress is not the new run's
    served.queue  # noqa: B018 - the property starts a new worker, as the class's supervisor does
    done = _wait(redis_url, job_id, token, timeout=WAIT_S + 60)
    assert done.state == "finished", done
    run = jobs.result(redis_url, job_id, token).run
    assert run.plain is not None and run.spec.n_generated == 256 and run.spec.generated_ids == run.plain.generated_ids


def test_a_run_whose_worker_dies_twice_fails_with_a_message(redis_url, served, models_dir):
    token = uuid.uuid4().hex
    job_id = jobs.submit(redis_url, _request(models_dir[1], "home runs dog", max_new_tokens=256), token,
                         queue=served.queue)
    assert _running_with_iterations(redis_url, job_id, token).state == "running"
    assert _first_poll_after(redis_url, job_id, token, _kill(served, redis_url, job_id)).attempt == 2
    served.queue  # noqa: B018 - a new worker takes the retried run
    assert _running_with_iterations(redis_url, job_id, token).state == "running"
    done = _first_poll_after(redis_url, job_id, token, _kill(served, redis_url, job_id))
    assert done.state == "failed" and done.message == jobs.DEAD_AGAIN, done
    assert jobs.status(redis_url, job_id, token).state == "failed"  # and it stays failed


# ---- identical requests in flight run once --------------------------------------------------------------------


def test_an_identical_request_in_flight_follows_it_and_leaving_keeps_it_for_the_others(redis_url, models_dir):
    from rq import Queue

    queue = f"unserved-{uuid.uuid4().hex[:8]}"
    waiting = Queue(queue, connection=records.connect(redis_url))
    a, b, c = (uuid.uuid4().hex for _ in range(3))
    request = _request(models_dir[0], "one fish two fish")
    first = jobs.submit(redis_url, request, a, queue=queue)
    second = jobs.submit(redis_url, request, b, queue=queue)
    third = jobs.submit(redis_url, request, c, queue=queue)
    assert len({first, second, third}) == 3 and waiting.job_ids == [first]  # one run, three tickets
    now = jobs.status(redis_url, second, b)
    assert now.state == "queued" and now.shared and now.message.startswith("Sharing a run another learner started")
    assert not jobs.status(redis_url, first, a).shared
    with pytest.raises(records.NotYourJob):
        jobs.status(redis_url, second, a)  # a ticket is still its own session's
    assert jobs.cancel(redis_url, first, a) == "left"  # the one who started it leaves: the others keep it
    assert jobs.status(redis_url, first, a).state == "cancelled" and waiting.job_ids == [first]
    assert jobs.status(redis_url, second, b).state == "queued"
    assert jobs.cancel(redis_url, second, b) == "left"
    assert jobs.status(redis_url, second, b).message == jobs.LEFT
    assert jobs.cancel(redis_url, third, c) == "cancelled"  # the last one who wanted it: off the queue
    assert waiting.job_ids == [] and jobs.status(redis_url, third, c).state == "cancelled"
    fresh = jobs.submit(redis_url, request, b, queue=queue)  # nothing in flight now: a run of its own
    assert waiting.job_ids == [fresh] and not jobs.status(redis_url, fresh, b).shared


def test_two_learners_pressing_run_together_get_one_run(redis_url, served, models_dir):
    a, b = uuid.uuid4().hex, uuid.uuid4().hex
    request = _request(models_dir[1], "red fox blue fox red fox", max_new_tokens=24)
    first = jobs.submit(redis_url, request, a, queue=served.queue)
    second = jobs.submit(redis_url, request, b, queue=served.queue)
    for job_id, token in ((second, b), (first, a)):
        now = _wait(redis_url, job_id, token)
        assert now.state == "finished", now.message
    mine, theirs = jobs.result(redis_url, first, a), jobs.result(redis_url, second, b)
    assert not theirs.cached and theirs.recorded_at == mine.recorded_at  # the same run, recorded once
    assert theirs.run.spec == mine.run.spec and theirs.run.plain == mine.run.plain
    assert jobs.status(redis_url, second, b).shared
    assert len(jobs.iterations(redis_url, second, b)) == len(jobs.iterations(redis_url, first, a)) > 0


def test_a_running_shared_run_goes_on_when_its_starter_cancels(redis_url, served, models_dir):
    a, b = uuid.uuid4().hex, uuid.uuid4().hex
    request = _request(models_dir[1], "dog cat dog cat dog", max_new_tokens=160)
    first = jobs.submit(redis_url, request, a, queue=served.queue)
    assert _running_with_iterations(redis_url, first, a).state == "running"
    second = jobs.submit(redis_url, request, b, queue=served.queue)
    assert jobs.status(redis_url, second, b).shared
    assert jobs.cancel(redis_url, first, a) == "left"
    now = _wait(redis_url, second, b)
    assert now.state == "finished", now.message
    run = jobs.result(redis_url, second, b).run
    assert run.stopped_in is None and run.plain is not None and run.spec.n_generated == request.max_new_tokens


def test_a_worker_that_starts_while_redis_is_down_waits_for_it_and_registers(tmp_path):
    """A class restarts Redis and workers independently: a worker whose Redis goes away while it starts (the fresh-
    clone CI once killed Redis just as a restarted worker registered its machine) waits for it instead of exiting."""
    import shutil
    import socket

    from rq import Worker

    from tests.conftest import start_redis

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"redis://127.0.0.1:{port}/0"
    with (tmp_path / "worker.log").open("w") as log:
        worker = start_worker(url, "never-served", log)  # nothing answers on that port yet
        time.sleep(3)
        assert worker.poll() is None, (tmp_path / "worker.log").read_text()
        server, _ = start_redis(shutil.which("redis-server"), tmp_path, port)
        try:
            conn = records.connect(url)
            deadline = time.monotonic() + 60
            while Worker.count(connection=conn) == 0 and time.monotonic() < deadline and worker.poll() is None:
                time.sleep(0.2)
            assert worker.poll() is None and Worker.count(connection=conn) == 1, (tmp_path / "worker.log").read_text()
            assert conn.smembers(records.MACHINES)  # and it said which machine it runs on
        finally:
            stop_process(worker)
            stop_process(server, 10)
