"""bench/repeat.py counts every run it has recorded, across invocations: the flake-rate table is made from the
runs kept in bench/results/repeat-<label>-runs.json, not only the latest invocation's."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from repeat import table  # noqa: E402

KILL = "scenarios/self_healing/test_self_healing.py::test_a_killed_component_comes_back[etcd]"
TLS = "scenarios/etcd/test_etcd.py::test_members_use_tls_on_peer_and_client_urls"


def run(outcome: str, healthy_after: float, reason: str = "") -> dict:
    return {"at": "2026-11-26T00:00:00Z", "outcomes": {KILL: outcome, TLS: "passed"},
            "reasons": {KILL: reason} if reason else {}, "figures": {KILL: {"healthy_after_s": [healthy_after]}}}


def test_the_table_counts_the_runs_of_every_invocation_with_their_failures_and_spread():
    earlier = [run("passed", 1.0), run("passed", 3.0)]
    tonight = [run("failed", 30.0, "run 3: recovery: 30 s > 16 s"), run("skipped", 0.0)]
    rows = {row["scenario"]: row for row in table(earlier + tonight)}
    killed = rows["test_a_killed_component_comes_back[etcd]"]
    assert (killed["runs"], killed["failed"]) == (3, 1)  # a skipped run is no run
    assert killed["failures"] == "run 3: recovery: 30 s > 16 s"
    assert killed["figures"] == "healthy_after_s 3.00 (1.00-30.00)"  # nothing from the skipped run
    assert (rows["test_members_use_tls_on_peer_and_client_urls"]["runs"],
            rows["test_members_use_tls_on_peer_and_client_urls"]["figures"]) == (4, "")
