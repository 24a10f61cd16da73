"""Pod startup latency (sig-scalability/slos/pod_startup_latency.md, docs/load.md): the p99 over the pods a scenario
started, from each pod's creation to the watch reporting it Running, against 5 s; a pod never seen Running within the
wait fails it. Scheduling throughput (pods bound per second, as ClusterLoader2's SchedulingThroughput) is a figure."""

from __future__ import annotations

from harness import thresholds
from harness.checkers.slo import percentile
from harness.checkers.verdict import Status, Verdict, checker, fmt
from harness.clients.pod_startup import OP
from harness.history import History, Outcome


@checker("pod-startup-slo")
def pod_startup_slo(history: History, *, max_s: float = thresholds.SLO_POD_STARTUP_S) -> Verdict:
    pods = history.ops_of(OP)
    if not pods:
        return Verdict("pod-startup-slo", Status.UNKNOWN, "no pod was created", {"pods": 0})
    started = [p for p in pods if p.outcome is Outcome.OK]
    latencies = [p.complete - p.invoke for p in started]
    bound = [p.extra["bound"] for p in pods if p.extra.get("bound") is not None]
    figures = {"pods": len(pods), "never_running": len(pods) - len(started),
               "p50_s": round(percentile(latencies, 0.5), 3) if latencies else None,
               "p99_s": round(percentile(latencies, 0.99), 3) if latencies else None,
               "scheduling_throughput_per_s": round(len(bound) / max(max(bound) - min(p.invoke for p in pods), 1e-3), 1)
               if bound else None}
    if len(started) < len(pods):
        return Verdict("pod-startup-slo", Status.FAIL, f"{len(pods) - len(started)} of {len(pods)} pods were never "
                       "seen Running", figures)
    p99 = figures["p99_s"]
    text = f"p99 pod startup {fmt(p99)} over {len(pods)} pods (SLO {fmt(max_s)})"
    return Verdict("pod-startup-slo", Status.FAIL if p99 > max_s else Status.PASS, text, figures)
