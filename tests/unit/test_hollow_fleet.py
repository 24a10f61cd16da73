"""Hollow nodes on a cluster Quorum did not build (harness/remote/hollow_fleet.py): asked for only on a disposable
target, recorded where any process finds them, taken down by the run's teardown, and swept by `quorum heal` only once
the kwok controller that plays them is gone. The kwok controller and the API are stand-ins here; the integration test
(test_inventory_check.py) runs the real ones."""

import json
import subprocess
from dataclasses import dataclass, field

import pytest

from harness.backends.remote.backend import RemoteBackend
from harness.inventory.load import load_inventory
from harness.load.hollow import HOLLOW_TAINT, node_object
from harness.remote import hollow_fleet
from harness.remote.hollow_fleet import OWNER, RUN_LABEL, Fleet
from harness.run.harness_process import Harness
from harness.target.capabilities import Capability
from tests.unit.test_inventory import example, problem, usable


@dataclass
class _Response:
    status_code: int = 200
    body: dict = field(default_factory=dict)
    text: str = ""

    def json(self) -> dict:
        return self.body

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            raise hollow_fleet.requests.HTTPError(str(self.status_code))


@dataclass
class _Api:
    """The nodes a cluster holds; each DELETE removes one (`refuse`: answered 500 instead)."""

    nodes: dict[str, dict] = field(default_factory=dict)
    refuse: set[str] = field(default_factory=set)
    deleted: list[str] = field(default_factory=list)

    def request(self, method, path, body=None, timeout=10.0):
        if method == "GET":
            return _Response(body={"items": list(self.nodes.values())})
        name = path.rsplit("/", 1)[1]
        if name in self.refuse:
            return _Response(500, text="etcdserver: request timed out")
        self.deleted.append(name)
        return _Response(200 if self.nodes.pop(name, None) else 404)


def _hollow(name: str, kwok: Harness | None) -> dict:
    annotations = {OWNER: json.dumps(kwok.__dict__)} if kwok else {}
    return node_object(name, "run-abc123", "v0.0.0-quorum-kwok", tainted=True, labels={RUN_LABEL: "abc123"},
                       annotations=annotations)


@pytest.fixture
def stand_in_kwok():
    """A process of this machine standing in for a fleet's kwok controller."""
    process = subprocess.Popen(["sleep", "300"], start_new_session=True)
    yield process, Harness.of(process.pid, "kwok --config=/tmp/stand-in/kwok.yaml")
    if process.poll() is None:
        process.kill()
        process.wait()


def test_hollow_nodes_are_asked_for_only_on_a_disposable_target(tmp_path):
    data = example()
    data["hollow_nodes"] = 20
    assert "hollow_nodes adds Node objects to the cluster" in problem(tmp_path, data)
    assert "set disposable: true" in problem(tmp_path, data)
    data["disposable"] = True
    inventory = load_inventory(usable(tmp_path, data))
    assert inventory.hollow_nodes.count == 20 and inventory.hollow_nodes.node_lease_s == 40
    data["hollow_nodes"] = {"count": 5000}
    assert "hollow_nodes.count" in problem(tmp_path, data)


def test_an_inventory_without_hollow_nodes_lacks_them_and_says_how_to_ask(tmp_path):
    backend = RemoteBackend()
    without = load_inventory(usable(tmp_path, example()))
    reason = backend.lacks(Capability.HOLLOW_NODES, topology=without)
    assert "asks for none" in reason and "hollow_nodes: {count: N}" in reason
    data = example()
    data.update(disposable=True, hollow_nodes=3)
    assert backend.lacks(Capability.HOLLOW_NODES, topology=load_inventory(usable(tmp_path, data))) is None


def test_a_fleet_is_recorded_in_its_run_directory_with_its_selector(tmp_path, stand_in_kwok):
    _, kwok = stand_in_kwok
    fleet = Fleet("abc123", hollow_fleet.node_names("abc123", 3), kwok)
    fleet.save(tmp_path)
    assert Fleet.load(tmp_path) == fleet
    assert fleet.names == ("hollow-abc123-0000", "hollow-abc123-0001", "hollow-abc123-0002")
    assert fleet.player == "run-abc123"
    assert fleet.selector == "labelSelector=quorum.dev/hollow%3Dtrue%2Cquorum.dev/hollow-run%3Dabc123"
    assert Fleet.load(tmp_path / "elsewhere") is None


def test_a_hollow_node_on_a_target_is_tainted_and_the_hollow_pods_tolerate_it():
    from harness.clients.pod_startup import pod
    from harness.load.hollow import deployment_object

    node = node_object("hollow-abc123-0000", "run-abc123", "v0.0.0-quorum-kwok", tainted=True)
    assert node["spec"]["taints"] == [HOLLOW_TAINT]
    assert "spec" not in node_object("hollow-n1-0000", "n1", "v1.34.4-kwok")  # a topology's own: untainted
    for spec in (pod("p")["spec"], deployment_object(1)["spec"]["template"]["spec"]):
        assert any(t["key"] == HOLLOW_TAINT["key"] and t["effect"] == HOLLOW_TAINT["effect"]
                   for t in spec["tolerations"])


def test_the_teardown_stops_kwok_and_deletes_the_nodes_then_forgets_the_fleet(tmp_path, stand_in_kwok):
    process, kwok = stand_in_kwok
    fleet = Fleet("abc123", hollow_fleet.node_names("abc123", 2), kwok)
    fleet.save(tmp_path)
    api = _Api({name: _hollow(name, kwok) for name in fleet.names})
    done, failed = hollow_fleet.stop(api, tmp_path)
    assert not failed and process.wait(timeout=15) is not None
    assert done == [f"stopped the hollow nodes' kwok controller (pid {kwok.pid})",
                    "deleted 2 hollow nodes of run abc123"]
    assert not api.nodes and Fleet.load(tmp_path) is None
    assert hollow_fleet.stop(api, tmp_path) == ([], [])  # nothing left to do


def test_a_node_the_api_refuses_to_delete_keeps_the_fleet_for_the_next_teardown(tmp_path):
    fleet = Fleet("abc123", hollow_fleet.node_names("abc123", 2))
    fleet.save(tmp_path)
    api = _Api({name: _hollow(name, None) for name in fleet.names}, refuse={"hollow-abc123-0001"})
    done, failed = hollow_fleet.stop(api, tmp_path)
    assert done == [] and failed == ["node hollow-abc123-0001 could not be deleted: HTTP 500 etcdserver: request "
                                     "timed out"]
    assert Fleet.load(tmp_path) == fleet  # a second `quorum down` tries again
    api.refuse.clear()
    assert hollow_fleet.stop(api, tmp_path) == (["deleted 2 hollow nodes of run abc123"], [])


def test_the_heal_deletes_the_nodes_of_a_kwok_that_is_gone_and_leaves_a_live_ones(stand_in_kwok):
    process, live = stand_in_kwok
    gone = subprocess.Popen(["true"])
    dead = Harness.of(gone.pid, "kwok --config=/tmp/old/kwok.yaml")
    gone.wait()
    elsewhere = Harness("another-machine", "boot", 4242, 1, "kwok")
    api = _Api({"live-0": _hollow("live-0", live), "dead-0": _hollow("dead-0", dead),
                "far-0": _hollow("far-0", elsewhere), "unnamed-0": _hollow("unnamed-0", None)})
    swept = hollow_fleet.sweep(api)
    assert swept.deleted == ["deleted hollow node dead-0 (its kwok controller is gone)"] and not swept.failed
    assert sorted(api.nodes) == ["far-0", "live-0", "unnamed-0"]
    assert any(f"live-0): their kwok controller belongs to pid {live.pid}" in said and "still running" in said
               for said in swept.left_alone), swept.left_alone
    assert any("far-0): their kwok controller belongs to pid 4242" in said and "--force deletes it" in said
               for said in swept.left_alone), swept.left_alone
    assert any("unnamed-0): their kwok controller names no harness" in said for said in swept.left_alone)
    forced = hollow_fleet.sweep(api, force=True)
    assert sorted(api.nodes) == ["live-0"] and len(forced.deleted) == 2  # --force: all but a live one's
    assert process.poll() is None  # the heal never touches a process


def test_an_api_that_cannot_list_the_nodes_is_said_and_nothing_is_deleted():
    class _Down(_Api):
        def request(self, method, path, body=None, timeout=10.0):
            raise hollow_fleet.requests.ConnectionError("connection refused")

    swept = hollow_fleet.sweep(_Down())
    assert swept.deleted == [] and swept.failed == ["the hollow nodes could not be listed: connection refused "
                                                    "(the next heal tries again)"]


def test_a_fleet_that_does_not_start_leaves_no_run_behind(tmp_path, monkeypatch):
    """`up` on an inventory with hollow nodes whose kwok controller cannot start: the error names it, and the run it
    registered is taken down (its teardown stops what started), so nothing half-done is left."""
    from harness.backends.remote import backend as remote_backend
    from harness.errors import ClusterError
    from harness.run.state import registered_runs

    data = example()
    data.update(disposable=True, hollow_nodes=3)
    inventory = usable(tmp_path, data)
    monkeypatch.setattr(remote_backend, "check", lambda inventory, base: [])  # every piece answers
    monkeypatch.setattr(remote_backend, "api_credentials", lambda *args: None)
    monkeypatch.setattr(remote_backend.RemoteTarget, "api", None)
    monkeypatch.setattr(remote_backend.RemoteTarget, "admin_kubeconfig", tmp_path / "kubeconfig")
    stopped = []
    monkeypatch.setattr(remote_backend.hollow_fleet, "stop", lambda api, run_dir: stopped.append(run_dir) or ([], []))

    def fails(api, kubeconfig, run_dir, run_id, wanted, say):
        Fleet(run_id, hollow_fleet.node_names(run_id, wanted.count)).save(run_dir)  # as far as it got
        raise ClusterError("the kwok controller did not start (exit 1): no such kubeconfig", "read its log")

    monkeypatch.setattr(remote_backend.hollow_fleet, "start", fails)
    run_dir = tmp_path / "run"
    with pytest.raises(ClusterError, match="the kwok controller did not start"):
        RemoteBackend().up(inventory, run_dir)
    assert stopped == [run_dir.resolve()]
    assert not (run_dir / "state.json").exists()
    assert run_dir.resolve() not in registered_runs().values()
