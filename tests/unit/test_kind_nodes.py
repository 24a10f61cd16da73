"""The kind target reads its node list once the whole topology's nodes are there, and the health check reads the
nodes' addresses in one `docker container inspect` (docs/design.md, 2026-12-02: 30 docker processes per look)."""

import json
import shutil
from pathlib import Path

from harness.backends.kind import nodes
from harness.backends.kind.target import KindTarget
from harness.run.state import RunState

ROOT = Path(__file__).resolve().parents[2]


def _target(tmp_path: Path) -> KindTarget:
    shutil.copy(ROOT / "clusters" / "kind.yaml", tmp_path / "topology.yaml")
    RunState(run_id="abc123", name="kind", backend="kind", run_dir=str(tmp_path), docker_network="qd-abc123").save()
    return KindTarget(tmp_path)


def test_the_node_list_is_kept_only_once_every_node_of_the_topology_is_there(tmp_path, monkeypatch):
    listings = []
    present = {"control-plane": "control-plane", "external-load-balancer": "external-load-balancer"}

    def roles(kind_name: str) -> dict[str, str]:
        listings.append(kind_name)
        return dict(present)

    monkeypatch.setattr(nodes, "roles", roles)
    target = _target(tmp_path)
    assert target.hosts() == ["control-plane"] and target.hosts("controller") == ["control-plane"]
    assert len(listings) == 2, "a partial cluster (mid-build) is listed again on every call"
    present.update({"control-plane2": "control-plane", "control-plane3": "control-plane", "worker": "worker",
                    "worker2": "worker"})
    assert target.hosts("worker") == ["worker", "worker2"]
    assert target.hosts("controller") == ["control-plane", "control-plane2", "control-plane3"]
    assert target.hosts("load-balancer") == [] and len(listings) == 3
    target.reload()  # a rebuild: listed afresh
    assert len(target.hosts()) == 5 and len(listings) == 4


def test_addresses_come_from_one_inspect_and_a_stopped_node_has_none(tmp_path, monkeypatch):
    calls = []
    inspected = {"quorum-abc123-control-plane": {"qd-abc123": {"IPAddress": "10.213.51.6"}},
                 "quorum-abc123-worker": {"qd-abc123": {"IPAddress": ""}}}  # what docker says of a stopped one

    class Done:
        def __init__(self, names: list[str]) -> None:
            known = [name for name in names if name in inspected]
            self.returncode = 0 if len(known) == len(names) else 1
            self.stdout = "".join(json.dumps(inspected[name]) + "\n" for name in known)
            self.stderr = "" if self.returncode == 0 else "Error: No such container"

    def run(argv, **kwargs):
        calls.append(argv)
        return Done(argv[5:])

    monkeypatch.setattr(nodes.subprocess, "run", run)
    target = _target(tmp_path)
    assert target.addresses(["control-plane", "worker"]) == {"control-plane": "10.213.51.6", "worker": None}
    assert len(calls) == 1 and calls[0][:5] == [nodes.DOCKER_CLIENT, "container", "inspect", "--format",
                                                "{{json .NetworkSettings.Networks}}"]
    assert nodes.addresses(["quorum-abc123-control-plane", "quorum-abc123-gone"], "qd-abc123") is None
