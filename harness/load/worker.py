"""One load worker process: `python -m harness.load.worker SPEC.json RECORDS.jsonl SUMMARY.json`.

Runs the users headless for the spec's duration (bounded also by its request count and a hard alarm),
writes one JSON line per request (monotonic start and end, verb, resource, scope, outcome) and, at the
end, locust's own totals."""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import gevent  # noqa: E402
from locust.env import Environment  # noqa: E402

from harness.load import users  # noqa: E402
from harness.load.spec import spec_file_or_exit  # noqa: E402

GRACE_S = 30.0  # after the duration: requests in flight finish, then the alarm ends the process


def main(spec_file: str, records_file: str, summary_file: str) -> int:
    spec = spec_file_or_exit(spec_file, "harness.load.worker")
    users.configure(spec)
    signal.alarm(int(spec.duration_s + GRACE_S + spec.request_timeout_s))  # the last bound, whatever happens
    environment = Environment(user_classes=[users.ApiClientUser], host=spec.endpoint)
    runner = environment.create_local_runner()
    out = open(records_file, "a", buffering=1)
    count = 0

    def on_request(request_type, name, response_time, response_length, exception=None, response=None, **_):
        nonlocal count
        end = time.monotonic()
        verb, resource, scope = name.split(" ", 2)
        status = getattr(response, "status_code", 0) if response is not None else 0
        out.write(json.dumps({"t0": end - response_time / 1000.0, "t1": end, "verb": verb, "resource": resource,
                              "scope": scope, "method": request_type, "ok": exception is None, "status": status,
                              "error": "" if exception is None else str(exception)[:200]}) + "\n")
        count += 1
        if count >= spec.max_requests:
            gevent.spawn(runner.quit)

    environment.events.request.add_listener(on_request)
    gevent.signal_handler(signal.SIGTERM, runner.quit)
    gevent.signal_handler(signal.SIGINT, runner.quit)
    started = time.monotonic()
    runner.start(spec.users, spawn_rate=max(spec.users, 1))  # all at once: the rate is set by wait_time
    gevent.spawn_later(spec.duration_s, runner.quit)
    runner.greenlet.join()
    elapsed = time.monotonic() - started
    total = environment.stats.total
    Path(summary_file).write_text(json.dumps({
        "requests": total.num_requests, "failures": total.num_failures, "elapsed_s": elapsed,
        "rps": total.num_requests / elapsed if elapsed else 0.0,
        "p50_ms": total.get_response_time_percentile(0.5), "p99_ms": total.get_response_time_percentile(0.99),
    }))
    out.close()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:  # a usage line, not a traceback
        sys.exit("usage: python -m harness.load.worker SPEC.json RECORDS.jsonl SUMMARY.json")
    sys.exit(main(*sys.argv[1:4]))
