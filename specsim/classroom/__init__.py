"""A class: live runs and the pages' measurements as jobs on a queue (RQ over Redis), served by workers.

A worker runs a request with :mod:`specsim.liverun`, as the live page does in its own process. ``runcache`` keeps
finished runs for everyone; ``records`` is a job's record in Redis, for every kind of job; ``jobs`` (the live runs)
and ``tasks`` (the pages' measurements) put work on the queue and follow it for a page, ``jobstate`` saying where a
job is; ``running`` is what a worker
runs for a live run, with the heartbeat beside every running job; ``worker`` serves the queue
(``python -m specsim.classroom.worker --redis URL``). The top layer: it imports every other.
"""
