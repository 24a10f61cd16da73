"""API load: locust users that behave like a cluster's clients, run in worker processes, and one plain reader process
for the mix's rate-only reads (harness/load/reader.py; its records: harness/load/records.py).

locust monkey-patches the interpreter with gevent when it is imported, which would turn the pytest
process's threads (monitors, the Nemesis) into greenlets; so only the worker processes import it
(harness/load/users.py, harness/load/worker.py) and the harness talks to them through files.
"""
