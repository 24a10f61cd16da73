"""Whole hosts are a part of the target (harness/target/power.py): the capabilities follow from the part, and the
node faults reach a host's power only through it."""

import pytest

from harness.backends import registry
from harness.backends.fake.target import FakeTarget
from harness.errors import Unsupported
from harness.faults.node import NodeDisconnect, NodeKill, NodeRestart
from harness.target.capabilities import Capability
from tests.unit.conftest import fake_target


@pytest.mark.parametrize("backend", registry.all_backends(), ids=lambda backend: backend.name)
def test_a_backend_claims_whole_host_capabilities_exactly_when_it_has_a_power_part(backend):
    target_class = backend.target_class
    power = target_class.POWER
    assert (Capability.NODE_POWER in backend.capabilities) == (power is not None)
    assert (Capability.NODE_DISCONNECT in backend.capabilities) == (power is not None and power.DISCONNECTS)
    assert not {Capability.NODE_POWER, Capability.NODE_DISCONNECT} & target_class.CAPABILITIES, \
        f"{backend.name} lists a whole-host capability by hand instead of through its Power part"


class Unplugged(FakeTarget):
    POWER = None


def test_a_target_without_the_part_refuses_with_the_capability_it_lacks(tmp_path):
    target = fake_target(tmp_path, cls=Unplugged)
    with pytest.raises(Unsupported) as refused:
        target.power.off(["c1"])
    assert "node-power" in refused.value.problem


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
