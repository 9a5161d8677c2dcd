"""A class: live runs and the pages' measurements as jobs on a queue (RQ over Redis), served by workers.

``liverun`` is one live run as a plain function (the live page calls it in-process, a worker calls it in class
mode); ``runcache`` keeps finished runs for everyone; ``jobs`` and ``tasks`` put runs and measurements on the queue;
``worker`` serves them (``python -m specsim.classroom.worker --redis URL``). The top layer: it imports every
other.
"""
