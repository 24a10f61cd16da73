"""Monitor overhead and sampling accuracy on a real ha3 cluster.

For the API prober at several requested rates: achieved rate, jitter of the request start times
against their schedule (per worker), and the harness's CPU use. For the leader watcher: achieved
sampling period of the lease and etcd polls (the failover timing resolution).

    python bench/monitors.py [--seconds 10]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import write_results  # noqa: E402

from harness.backends import registry  # noqa: E402
from harness.history import History  # noqa: E402
from harness.monitors import ApiProber, EtcdWriter, LeaderWatcher  # noqa: E402


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def jitter_ms(ops, period: float) -> float:
    """Median absolute deviation of each worker's request starts from an ideal grid of `period`."""
    deviations = []
    for process_name in {o.process for o in ops}:
        starts = sorted(o.invoke for o in ops if o.process == process_name)
        deviations += [abs((b - a) - period) for a, b in zip(starts, starts[1:])]
    return 1000 * statistics.median(deviations) if deviations else float("nan")


def measure(monitor_cls, cluster, rate: float, seconds: float, **kwargs) -> dict:
    history = History()
    before_cpu, before = cpu(), time.monotonic()
    monitor = monitor_cls(cluster, history, rate=rate, **kwargs)
    with monitor:
        time.sleep(seconds)
    elapsed = time.monotonic() - before
    ops = [o for o in history.ops if not o.f.endswith("read_all")]
    return {
        "monitor": monitor_cls.name, "requested_per_s": rate, "achieved_per_s": round(len(ops) / seconds, 1),
        "ok_pct": round(100 * sum(o.ok for o in ops) / max(1, len(ops)), 2),
        "p50_latency_ms": round(1000 * statistics.median(o.latency for o in ops), 1) if ops else None,
        "jitter_ms": round(jitter_ms(ops, monitor.workers / rate), 2),
        "cpu_pct_of_one_core": round(100 * (cpu() - before_cpu) / elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        cluster = registry.get("process").up(ROOT / "clusters" / "ha3.yaml", Path(scratch) / "run")
        try:
            for rate in (20, 50, 100):
                rows.append(measure(ApiProber, cluster, rate, args.seconds))
            for rate in (20, 50):  # fresh_api_prober: a new connection (TCP and TLS) per request, as kubectl opens
                rows.append({**measure(ApiProber, cluster, rate, args.seconds, workers=2, fresh=2),
                             "monitor": "api (new connections)"})
            for rate in (20, 100):
                rows.append(measure(EtcdWriter, cluster, rate, args.seconds))
            history = History()
            before_cpu, before = cpu(), time.monotonic()
            watcher = LeaderWatcher(cluster, history).start()
            time.sleep(args.seconds)
            watcher.stop()
            elapsed = time.monotonic() - before
            for source, count in watcher.samples.items():
                rows.append({"monitor": f"leases ({'lease LIST' if source == 'leases' else 'etcd ' + source.split('//')[1]})",
                             "requested_per_s": 10, "achieved_per_s": round(count / elapsed, 1),
                             "cpu_pct_of_one_core": round(100 * (cpu() - before_cpu) / elapsed, 1)})
        finally:
            registry.down(cluster.run_dir)
    write_results("monitors", rows, ["monitor", "requested_per_s", "achieved_per_s", "ok_pct", "p50_latency_ms",
                                     "jitter_ms", "cpu_pct_of_one_core"],
                  f"Monitor rate, jitter and overhead on ha3 ({args.seconds:.0f} s each)",
                  "jitter_ms: median |actual - scheduled| gap between one worker's consecutive request starts. "
                  "The leader watcher's rows share one CPU figure (all its threads). Sampling period = "
                  "1 / achieved_per_s bounds the failover timing resolution.")


if __name__ == "__main__":
    main()
