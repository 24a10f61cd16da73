"""Whole hosts, the network and health are parts of the target (harness/target/power.py, network.py, health.py): the
capabilities follow from the parts, and the faults reach a host's power and its packets only through them."""

import pytest

from harness.backends import registry
from harness.backends.fake.health import ModelHealth
from harness.backends.fake.power import ModelPower
from harness.backends.fake.target import FakeTarget
from harness.errors import Unsupported
from harness.faults.node import NodeDisconnect, NodeKill, NodeRestart
from harness.target.capabilities import Capability
from harness.target.health import Health
from harness.target.power import Power
from tests.unit.conftest import fake_target


@pytest.mark.parametrize("backend", registry.all_backends(), ids=lambda backend: backend.name)
def test_a_backend_claims_whole_host_capabilities_exactly_when_it_has_a_power_part(backend):
    target_class = backend.target_class
    power = target_class.POWER
    assert (Capability.NODE_POWER in backend.capabilities) == (power is not None)
    assert (Capability.NODE_DISCONNECT in backend.capabilities) == (power is not None and power.DISCONNECTS)
    assert not {Capability.NODE_POWER, Capability.NODE_DISCONNECT} & target_class.CAPABILITIES, \
        f"{backend.name} lists a whole-host capability by hand instead of through its Power part"
    network = target_class.NETWORK
    assert ({Capability.NETWORK, Capability.SHAPE} <= backend.capabilities) == (network is not None)
    assert not {Capability.NETWORK, Capability.SHAPE} & target_class.CAPABILITIES, \
        f"{backend.name} lists a network capability by hand instead of through its Network part"
    assert (Capability.LB_ADMIN in backend.capabilities) == target_class.HEALTH.LB_VIEW
    assert Capability.LB_ADMIN not in target_class.CAPABILITIES, \
        f"{backend.name} lists the load balancer's view by hand instead of through its Health part"


KEPT = {Capability.HOLD, Capability.OVERRIDE_ARGS, Capability.SUPERVISOR, Capability.STATIC_PODS,
        Capability.SELF_HOSTED}  # what a component's keeper does or is


@pytest.mark.parametrize("backend", registry.all_backends(), ids=lambda backend: backend.name)
def test_a_backend_claims_what_its_keepers_offer_and_lists_none_of_it_by_hand(backend):
    """Holds, overrides and what keeps the control plane running follow from the kinds of keeper the target picks
    from (KEEPERS), and a signal from the target itself: none is a hand-kept entry of the backend's list."""
    target_class = backend.target_class
    assert target_class.KEEPERS, f"{backend.name} names no kind of keeper"
    offered = frozenset().union(*(keeper.capabilities() for keeper in target_class.KEEPERS))
    assert backend.capabilities & KEPT == offered & KEPT
    assert Capability.SIGNAL in backend.capabilities
    assert not (KEPT | {Capability.SIGNAL}) & target_class.CAPABILITIES, \
        f"{backend.name} lists a keeper's capability by hand instead of through its KEEPERS"


class PowerWithoutDisconnect(ModelPower):
    DISCONNECTS = False
    def disconnect(self, host: str) -> None:  # as a part that cannot remove an interface has it
        Power.disconnect(self, host)


class NoDisconnect(FakeTarget):
    POWER = PowerWithoutDisconnect


def test_a_power_part_that_cannot_disconnect_refuses_naming_the_capability(tmp_path):
    """kind's nodes lose power but not their interface: the refusal names node-disconnect, as the protocol checks
    require of every capability a target lacks."""
    target = fake_target(tmp_path, cls=NoDisconnect)
    assert Capability.NODE_POWER in target.capabilities() and Capability.NODE_DISCONNECT not in target.capabilities()
    with pytest.raises(Unsupported) as refused:
        target.power.disconnect("c1")
    assert "node-disconnect" in refused.value.problem and target.model()["hosts"]["c1"]["connected"] is True


class Unplugged(FakeTarget):
    NETWORK = None
    POWER = None


def test_a_target_without_the_parts_refuses_with_the_capabilities_it_lacks(tmp_path):
    target = fake_target(tmp_path, cls=Unplugged)
    with pytest.raises(Unsupported) as refused:
        target.power.off(["c1"])
    assert "node-power" in refused.value.problem
    with pytest.raises(Unsupported) as refused:
        target.network.drop("c1", sources=["c2"], tag="t")
    assert "network" in refused.value.problem and not target.model()["hosts"]["c1"]["rules"]


def test_the_node_faults_act_and_heal_through_the_part(tmp_path):
    target = fake_target(tmp_path)
    kill = NodeKill(host="c2")
    kill.act(target)
    assert target.model()["hosts"]["c2"]["power"] == "off"
    assert all(entry["pid"] is None for key, entry in target.model()["components"].items() if key.endswith("@c2"))
    kill.undo(target)
    assert target.model()["hosts"]["c2"]["power"] == "on"
    assert all(entry["pid"] for key, entry in target.model()["components"].items() if key.endswith("@c2"))

    unplug = NodeDisconnect(host="c3")
    unplug.act(target)
    assert target.model()["hosts"]["c3"]["connected"] is False
    unplug.undo(target)
    assert target.model()["hosts"]["c3"]["connected"] is True

    restart = NodeRestart()
    restart.plan(target)
    restart.act(target)
    controllers = restart.captured["hosts"]
    assert [call for call in target.calls() if call[0] == "power"][-1] == ["power", "off", controllers]
    assert all(target.model()["hosts"][host]["power"] == "on" for host in controllers)


class ScriptedHost:
    """A remote host's link as `tc` and the marker file see it: enough of a target for OwnersLinks."""

    name = "staging"

    def __init__(self, root: str) -> None:
        self.root, self.marker, self.ran = root, "", []

    def link(self, host: str) -> str:
        return "eth0"

    def exec(self, host: str, argv: list[str], check: bool = True) -> str:
        self.ran.append(argv)
        if argv[:3] == ["tc", "qdisc", "show"]:
            return f"qdisc {self.root} root refcnt 2\n"
        if argv[0] == "cat":
            return self.marker
        if argv[0] == "sh":  # echo "$1" > "$2": the handle recorded before the qdisc goes on
            self.marker = argv[4]
        if argv[:3] == ["tc", "qdisc", "replace"]:
            self.root = f"tbf {argv[argv.index('handle') + 1]}"
        if argv[:3] == ["tc", "qdisc", "del"]:
            self.root = "noqueue 0:"
        if argv[:2] == ["rm", "-f"]:
            self.marker = ""
        return ""


def test_a_remote_link_is_shaped_only_from_the_kernels_default_and_restored_to_it():
    from harness.backends.remote.links import OwnersLinks
    from harness.errors import FaultError
    from harness.net import shaping

    owned = ScriptedHost("fq_codel 8001:")
    with pytest.raises(FaultError) as refused:
        OwnersLinks(owned).shape("h1", 10.0, tag="f1")
    assert "its owner configured (fq_codel 8001:)" in refused.value.problem
    assert not [argv for argv in owned.ran if argv[:3] == ["tc", "qdisc", "replace"]]

    host = ScriptedHost("noqueue 0:")
    links = OwnersLinks(host)
    links.shape("h1", 10.0, tag="f1")
    assert host.root == f"tbf {shaping.handle('f1')}" and host.marker == shaping.handle("f1")
    assert links.restore_link("h1", tag="f2") is False and host.root.startswith("tbf")  # another fault's undo
    assert links.restore_link("h1", tag="f1") is True
    assert host.root == "noqueue 0:" and host.marker == ""
    assert links.restore_link("h1") is False


class HealthWithoutTheLoadBalancersView(ModelHealth):
    LB_VIEW = False

    def lb_server_states(self) -> dict[str, str]:  # as a part without the view has it
        return Health.lb_server_states(self)


class Blindfolded(FakeTarget):
    HEALTH = HealthWithoutTheLoadBalancersView


def test_a_health_part_without_the_load_balancers_view_refuses_it_naming_the_capability(tmp_path):
    """kind and remote targets judge the load balancer from outside: asked for its own view, they refuse with
    lb-admin, and the rest of their health still answers."""
    target = fake_target(tmp_path, cls=Blindfolded)
    assert Capability.LB_ADMIN not in target.capabilities()
    with pytest.raises(Unsupported) as refused:
        target.health.lb_server_states()
    assert "lb-admin" in refused.value.problem
    assert target.health.problems() == [] and target.health.component_healthy("etcd", "c1")
