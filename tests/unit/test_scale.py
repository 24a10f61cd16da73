"""The pure parts of control-plane scale: the membership checker over recorded shapes, a topology's spare and
leaving hosts, and what they configure (the apiservers' etcd members, the load balancer's disabled entries)."""

from pathlib import Path

import pytest
import yaml

from harness.checkers.membership import SHAPE, disagreements, membership_agreed
from harness.history import History
from harness.components import etcd, haproxy
from harness.components.base import Layout
from harness.errors import TopologyError
from harness.topology import parse_topology

ROOT = Path(__file__).resolve().parents[2]
SCALE = yaml.safe_load((ROOT / "clusters" / "ha3-scale.yaml").read_text())


def shape(**changes) -> dict:
    agreed = {"when": "step", "settled": False, "controllers": ["c1", "c2", "c3"], "voters": ["c1", "c2", "c3"],
              "learners": [], "rotation": ["c1", "c2", "c3"],
              "holders": {"kube-controller-manager": "c1", "kube-scheduler": "c2"}}
    return {**agreed, **changes}


def topology(**host_roles):
    data = yaml.safe_load(yaml.safe_dump(SCALE))
    for entry in data["hosts"]:
        entry.update(host_roles.get(entry["name"], {}))
    return parse_topology(data)


def test_a_shape_whose_memberships_agree_has_no_disagreement_settled_or_not():
    assert disagreements(shape()) == [] and disagreements(shape(settled=True)) == []
    # mid-join: a promoted member whose apiserver is not in rotation yet is in line
    assert disagreements(shape(controllers=["c1", "c2", "c3", "c4"], voters=["c1", "c2", "c3", "c4"])) == []


def test_an_apiserver_in_rotation_on_a_host_without_a_voter_is_named():
    found = disagreements(shape(voters=["c2", "c3"]))
    assert found == ["the load balancer sends clients to c1's apiserver, but c1 is no etcd voter"]


def test_a_voter_or_a_lease_holder_off_the_controllers_is_named():
    found = disagreements(shape(controllers=["c2", "c3"], rotation=["c2", "c3"]))
    assert found == ["etcd voter c1 runs on no controller",
                     "the kube-controller-manager lease is held on c1, which is no controller"]


def test_a_settled_step_needs_the_same_hosts_everywhere_no_learner_and_every_lease_held():
    found = disagreements(shape(settled=True, controllers=["c1", "c2", "c3", "c4"], learners=["c4"],
                                holders={"kube-controller-manager": "c1", "kube-scheduler": None}))
    assert found == ["etcd's voters ['c1', 'c2', 'c3'] are not the controllers ['c1', 'c2', 'c3', 'c4']",
                     "the load balancer's rotation ['c1', 'c2', 'c3'] is not the controllers ['c1', 'c2', 'c3', 'c4']",
                     "c4 is still an etcd learner", "the kube-scheduler lease has no holder"]


def test_a_voter_that_does_not_answer_is_named_with_what_it_costs_the_quorum():
    # a member added as a voter before it runs: four voters, three answering, quorum three
    added = shape(controllers=["c1", "c2", "c3", "c4"], voters=["c1", "c2", "c3", "c4"], silent_voters=["c4"])
    assert disagreements(added) == ["etcd voter c4 does not answer: 3 of 4 voters answer against a quorum of 3, so "
                                    "one more failure loses quorum"]
    two = shape(controllers=["c1", "c2", "c3"], voters=["c1", "c2", "c3"], silent_voters=["c2", "c3"])
    assert disagreements(two)[0].endswith("1 of 3 voters answer against a quorum of 2, so quorum is lost")
    # the same member added as a learner is no voter: nothing to say until it is promoted
    assert disagreements(shape(controllers=["c1", "c2", "c3", "c4"], learners=["c4"])) == []


def recorded(*shapes: dict) -> History:
    """A History with each shape recorded as the scale scenario records it."""
    history = History()
    for observed in shapes:
        history.event(SHAPE, **observed)
    return history


def test_the_verdict_names_the_first_step_out_of_line_and_is_unknown_without_steps():
    verdict = membership_agreed(recorded(shape(when="joined"), shape(when="c1: etcd member removed", voters=["c2", "c3"]),
                                         shape(when="later", voters=["c2", "c3"])))
    assert not verdict and verdict.explanation.startswith("after 'c1: etcd member removed': the load balancer sends")
    assert "(and after 1 more steps)" in verdict.explanation
    assert membership_agreed(recorded(shape(), shape(settled=True))).passed
    assert membership_agreed(recorded()).status.value == "unknown"


def test_spare_hosts_are_no_controllers_and_a_scale_may_pass_through_an_even_count():
    built = topology()
    assert [h.name for h in built.controllers] == ["c1", "c2", "c3"] and [h.name for h in built.spares] == ["c4", "c5"]
    assert built.components_on(built.host("c4")) == []
    assert [h.name for h in topology(c4={"roles": ["controller"]}).etcd_hosts] == ["c1", "c2", "c3", "c4"]


@pytest.mark.parametrize("change, message", [
    ({"c4": {"roles": ["controller", "spare"]}}, "a spare host must be a host of its own"),
    ({"c5": {"roles": ["etcd"]}}, "spare hosts join as controllers that run an etcd member each"),
    ({"c4": {"retiring": True}}, "are retiring but are no controllers"),
])
def test_a_spare_or_leaving_host_that_cannot_be_one_is_refused_with_the_fix(change, message):
    with pytest.raises(TopologyError, match=message):
        topology(**change)


def test_a_leaving_controller_is_out_of_the_apiservers_etcd_members_and_disabled_at_the_load_balancer(tmp_path):
    leaving = topology(c1={"retiring": True})
    assert etcd.apiserver_urls(leaving) == ["https://10.213.45.12:2379", "https://10.213.45.13:2379"]
    config = haproxy.config(Layout(leaving, tmp_path, lambda name: Path(name)), leaving.host("lb"))
    servers = [line.strip() for line in config.splitlines() if line.strip().startswith("server ")]
    assert servers == ["server c1 10.213.45.11:6443 disabled", "server c2 10.213.45.12:6443",
                       "server c3 10.213.45.13:6443", "server c4 10.213.45.14:6443 disabled",
                       "server c5 10.213.45.15:6443 disabled"]
    assert "level admin" in config  # a scale takes servers in and out of rotation on the admin socket


def test_a_docker_host_starts_the_keepers_its_control_directories_name_now(tmp_path):
    # a reboot of a host a scale joined brings its components back; a retired host's none; a spare idles
    from harness.backends.docker.hostinit import components_of

    for component in ("etcd@c4", "kube-apiserver@c4", "etcd@c1", "etcd@c40"):
        (tmp_path / "components" / component).mkdir(parents=True)
    assert components_of(tmp_path, "c4") == ["etcd@c4", "kube-apiserver@c4"]
    assert components_of(tmp_path, "c5") == []
    assert components_of(tmp_path / "elsewhere", "c4") == []
