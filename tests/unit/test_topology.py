import copy
from pathlib import Path

import pytest
import yaml

from harness.errors import TopologyError
from harness.backends.kind.topology import is_kind_topology, load_kind_topology
from harness.topology import Component, load_topology, parse_topology

CLUSTERS = Path(__file__).resolve().parents[2] / "clusters"
# ha3's control plane: its kwok host and hollow nodes left out, so that each test adds the nodes hosts it needs
HA3 = yaml.safe_load((CLUSTERS / "ha3.yaml").read_text())
HA3["hosts"] = [host for host in HA3["hosts"] if "nodes" not in host["roles"]]
HA3["hollow_nodes"] = 0


def variant(**changes):
    data = copy.deepcopy(HA3)
    for dotted, value in changes.items():
        target = data
        *parents, leaf = dotted.split("__")
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    return data


def problem(data) -> str:
    with pytest.raises(TopologyError) as info:
        parse_topology(data, "t.yaml")
    return info.value.problem


# clusters/procedures/ and clusters/defects/procedures/ hold changes (harness/change/), not topologies
@pytest.mark.parametrize("path", sorted(p for p in CLUSTERS.rglob("*.yaml") if "procedures" not in p.parts),
                         ids=lambda p: p.name)
def test_shipped_topologies_are_valid(path):
    if is_kind_topology(path):
        assert load_kind_topology(path).disposable
    else:
        assert load_topology(path).disposable


def test_ha3_is_three_controllers_each_with_an_etcd_member_behind_a_load_balancer():
    t = load_topology(CLUSTERS / "ha3.yaml")
    assert [h.name for h in t.controllers] == ["c1", "c2", "c3"]
    assert t.etcd_hosts == t.controllers
    assert t.load_balancer_host.name == "lb"
    assert t.components_on(t.host("c1")) == [Component.ETCD, Component.APISERVER, Component.CONTROLLER_MANAGER,
                                             Component.SCHEDULER]
    assert t.api_endpoint == f"https://{t.address_of('lb')}:6443"


def test_dedicated_etcd_hosts_take_etcd_off_the_controllers():
    t = load_topology(CLUSTERS / "ha5-etcd.yaml")
    assert [h.name for h in t.etcd_hosts] == ["e1", "e2", "e3", "e4", "e5"]
    assert Component.ETCD not in t.components_on(t.host("c1"))


def test_addresses_are_assigned_in_file_order_and_given_ones_are_kept():
    data = variant()
    data["hosts"][2]["address"] = "10.213.3.50"
    t = parse_topology(data)
    assert [str(t.address_of(h)) for h in t.hosts] == ["10.213.3.10", "10.213.3.11", "10.213.3.50", "10.213.3.12"]


def test_unknown_key_is_named():
    message = problem(variant(etcd__heartbeet_ms=100))
    assert "etcd.heartbeet_ms: unknown key" in message


def test_unknown_top_level_key_is_named():
    assert "colour: unknown key" in problem(variant(colour="blue"))


def test_even_etcd_member_count_is_refused_with_the_fix():
    data = variant()
    data["hosts"] = data["hosts"][:3]  # lb, c1, c2
    message = problem(data)
    assert "2 etcd members" in message and "allow_even_members" in message


def test_even_member_count_is_allowed_when_asked_for():
    data = variant(etcd__allow_even_members=True)
    data["hosts"] = data["hosts"][:3]
    assert len(parse_topology(data).etcd_hosts) == 2


def test_no_controller_is_refused():
    data = variant()
    data["hosts"] = [{"name": "e1", "roles": ["etcd"]}]
    assert "no host has the controller role" in problem(data)


def test_renew_deadline_must_be_below_lease_duration():
    message = problem(variant(leader_election__renew_deadline_s=15))
    assert "leader_election" in message and "renew_deadline_s (15.0) must be less than lease_duration_s" in message


def test_retry_period_must_be_below_renew_deadline():
    assert "retry_period_s" in problem(variant(leader_election__retry_period_s=10))


def test_duplicate_host_names_are_refused():
    data = variant()
    data["hosts"][2]["name"] = "c1"
    assert "duplicate host names ['c1']" in problem(data)


def test_duplicate_addresses_are_refused():
    data = variant()
    data["hosts"][1]["address"] = data["hosts"][2]["address"] = "10.213.3.40"
    assert "duplicate host addresses ['10.213.3.40']" in problem(data)


def test_bridge_address_is_reserved():
    data = variant()
    data["hosts"][1]["address"] = "10.213.3.1"
    assert "reserved" in problem(data)


def test_an_unowned_address_is_the_highest_of_the_subnet_no_host_has():
    """What a misconfigured endpoint points at: inside the cluster's network, answered by nothing."""
    import ipaddress

    from harness.topology import unowned_address

    subnet = ipaddress.ip_network("10.213.3.0/29")  # .1 the bridge, .2-.6 hosts
    assert str(unowned_address(subnet, set())) == "10.213.3.6"
    assert str(unowned_address(subnet, {"10.213.3.6", "10.213.3.5"})) == "10.213.3.4"
    with pytest.raises(ValueError, match="belongs to a host"):
        unowned_address(subnet, {f"10.213.3.{n}" for n in range(2, 7)})
    data = variant()
    data["hosts"][1]["address"] = "10.213.3.254"
    t = parse_topology(data, "t.yaml")
    taken = {str(t.address_of(h)) for h in t.hosts}
    assert str(unowned_address(t.network.subnet, taken)) == "10.213.3.253"


def test_unsupported_version_is_refused():
    message = problem(variant(kubernetes="v1.20.1"))
    assert "kubernetes" in message and "not supported" in message and "v1.34.4" in message


def test_several_apiservers_need_a_load_balancer():
    data = variant()
    data["hosts"] = [h for h in data["hosts"] if h["name"] != "lb"]
    assert "3 apiservers and no load balancer" in problem(data)


def test_subnet_must_lie_in_the_quorum_range():
    assert "10.213.0.0/16" in problem(variant(network__subnet="192.168.1.0/24"))


def test_etcd_election_timeout_must_cover_five_heartbeats():
    assert "5 x heartbeat_ms" in problem(variant(etcd__election_timeout_ms=300))


def test_missing_file_and_bad_yaml_have_clear_errors(tmp_path):
    with pytest.raises(TopologyError, match="does not exist"):
        load_topology(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(TopologyError, match="not valid YAML"):
        load_topology(bad)


def test_every_problem_is_reported_at_once():
    message = problem(variant(colour="blue", etcd__heartbeet_ms=1))
    assert "colour" in message and "heartbeet_ms" in message


def test_defects_name_real_hosts_and_octal_modes():
    assert "unknown hosts ['c9']" in problem(variant(defects={"block_etcd_clients_from": ["c9"]}))
    assert "defects.key_mode" in problem(variant(defects={"key_mode": "0999"}))
    assert parse_topology(variant(defects={"key_mode": "0644"})).defects.key_mode == "0644"
    assert parse_topology(variant()).defects.phantom_etcd_member is False
    assert "defects.split_etcd_member 'lb' runs no etcd member" in problem(variant(defects={"split_etcd_member": "lb"}))
    assert parse_topology(variant()).defects.split_etcd_member is None


# ---- hollow nodes --------------------------------------------------------------------------------

def test_hollow_nodes_need_a_nodes_host():
    assert "no host has the nodes role; fix: add a host with roles: [nodes]" in problem(variant(hollow_nodes=10))


def test_hollow_nodes_are_shared_out_between_the_nodes_hosts():
    data = variant(hollow_nodes={"count": 5}, hosts=[*HA3["hosts"], {"name": "n1", "roles": ["nodes"]},
                                                     {"name": "n2", "roles": ["nodes"]}])
    topology = parse_topology(data)
    assert topology.hollow_node_names("n1") == ["hollow-n1-0000", "hollow-n1-0002", "hollow-n1-0004"]
    assert len(topology.hollow_node_names("n2")) == 2
    assert Component.KWOK in topology.components_on(topology.host("n1"))


def test_more_hollow_nodes_than_the_controllers_carry_names_how_many_nodes_hosts_to_add():
    data = variant(hollow_nodes={"count": 5000}, hosts=[*HA3["hosts"], {"name": "n1", "roles": ["nodes"]}])
    assert "fix: give 3 hosts roles: [nodes]" in problem(data)


def test_hollow_pod_addresses_stay_inside_the_guarded_range():
    data = variant(hollow_nodes={"count": 1, "pod_cidr": "10.0.0.0/16"},
                   hosts=[*HA3["hosts"], {"name": "n1", "roles": ["nodes"]}])
    assert "hollow_nodes.pod_cidr 10.0.0.0/16 must lie inside 10.213.0.0/16" in problem(data)


@pytest.mark.parametrize("change, says", [
    ({"load_balancer": {"health_check": {"path": "/readyz\n server evil 8.8.8.8:443"}}}, "load_balancer.health_check.path"),
    ({"apiserver": {"extra_flags": {"--audit-log-path": "/etc/cron.d/x"}}}, "--audit-log-path is not for a topology"),
    ({"apiserver": {"extra_flags": {"--v": "2\n--anonymous-auth=true"}}}, "holds a control character"),
    ({"apiserver": {"extra_flags": {"v 2": "x"}}}, "is not a flag name"),
    ({"leader_election": {"lease_duration_s": float("inf")}}, "leader_election.lease_duration_s"),
    ({"restart": {"etcd": {"backoff_s": 5, "max_backoff_s": 1}}}, "max_backoff_s (1.0) is less than backoff_s"),
    ({"load_balancer": {"health_check": {"interval_s": 1e-9}}}, "load_balancer.health_check.interval_s"),
], ids=["path-injection", "host-writing-flag", "flag-value-newline", "flag-name", "inf", "backoff-order", "tiny"])
def test_a_topology_value_that_would_reach_a_config_file_or_command_line_unchecked_is_refused(tmp_path, change, says):
    import yaml

    from harness.errors import TopologyError
    from harness.topology import load_topology

    data = yaml.safe_load((Path(__file__).resolve().parents[2] / "clusters" / "ha3.yaml").read_text())
    for key, value in change.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) and key != "restart" else value
        if key == "load_balancer":
            data[key] = {**data[key], "health_check": {**data["load_balancer"]["health_check"],
                                                        **value["health_check"]}}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(TopologyError) as error:
        load_topology(path)
    assert says in error.value.problem
