"""Host-to-host bandwidth with iperf3 between the cluster's hosts (traffic stays on the cluster network)."""

from __future__ import annotations

import json
import time

from harness.errors import QuorumError
from harness.shell import CommandError
from harness.target.capabilities import Capability
from harness.target.protocol import Target

IPERF_PORT = 5201


def iperf3_gbit(cluster: Target, sender: str, receiver: str, seconds: float = 3.0) -> float:
    """Measured TCP throughput from sender to receiver, in Gbit/s (what the receiver got)."""
    cluster.require(Capability.HOST_BANDWIDTH)
    address, iperf3 = cluster.address(receiver), cluster.tool_path("iperf3")
    if address is None:
        raise QuorumError(f"host {receiver} has no address (is it down?)", "quorum status shows the hosts")
    cluster.ensure_local()
    pidfile = f"/tmp/quorum-iperf3-{cluster.run_id}-{receiver}.pid"
    # one test, then it exits; daemonised so that `exec` returns, its pid kept to stop it whatever happens
    cluster.exec(receiver, [iperf3, "-s", "-1", "-D", "-I", pidfile, "-B", address, "-p", str(IPERF_PORT)])
    try:
        problem = ""
        for _ in range(30):  # the server needs a moment to listen; a run that lost that race is repeated
            try:
                out = cluster.exec(sender, [iperf3, "-c", address, "-p", str(IPERF_PORT), "-t", f"{seconds:g}", "-J"],
                                   timeout=seconds + 30)
            except CommandError as error:
                out = error.output
            result = None
            try:
                result = json.loads(out)
                return result["end"]["sum_received"]["bits_per_second"] / 1e9
            except (ValueError, KeyError, TypeError):
                problem = (result.get("error") if isinstance(result, dict) else None) or out[-300:]
            time.sleep(0.2)
        raise QuorumError(f"iperf3 {sender} -> {receiver} failed: {problem}")
    finally:
        # only if that pid is still an iperf3 (iperf3 removes its pidfile when it exits; a stale one may name another)
        stop = f'p=$(cat {pidfile} 2>/dev/null) && grep -qx iperf3 /proc/$p/comm && kill "$p"; rm -f {pidfile}'
        cluster.exec(receiver, ["sh", "-c", stop], check=False)
