"""Host-to-host bandwidth with iperf3 between Quorum hosts (traffic stays on the cluster bridge)."""

from __future__ import annotations

import json
import subprocess
import time

from harness.backends.process.target import Cluster
from harness.errors import QuorumError
from harness.shell import CommandError, in_netns

IPERF_PORT = 5201


def iperf3_gbit(cluster: Cluster, sender: str, receiver: str, seconds: float = 3.0) -> float:
    """Measured TCP throughput from sender to receiver, in Gbit/s (what the receiver got)."""
    address = str(cluster.topology.address_of(receiver))
    cluster.ensure_local()
    server = subprocess.Popen(in_netns(cluster.netns(receiver), [
        str(cluster.layout.binary("iperf3")), "-s", "-1", "-B", address, "-p", str(IPERF_PORT)]),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        problem = ""
        for _ in range(30):  # the server needs a moment to listen; a run that lost that race is repeated
            try:
                out = cluster.exec(sender, [str(cluster.layout.binary("iperf3")), "-c", address, "-p", str(IPERF_PORT),
                                            "-t", f"{seconds:g}", "-J"], timeout=seconds + 30)
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
        server.kill()
        server.wait(5)
