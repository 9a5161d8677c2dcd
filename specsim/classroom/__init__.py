"""A class: live runs and the pages' measurements as jobs on a queue (RQ over Redis), served by workers.

A worker runs a request with :mod:`specsim.liverun`, as the live page does in its own process; ``runcache`` keeps
finished runs for everyone; ``jobs`` and ``tasks`` put runs and measurements on the queue;
``worker`` serves them (``python -m specsim.classroom.worker --redis URL``). The top layer: it imports every
other.
"""
