"""Inputs a careful or a careless user gives (issue #56), each refused with the field, the problem and the fix,
never a traceback or a hang, and nothing started: topologies and inventories with a trailing newline, huge or odd
numbers, duplicate keys, colliding ports, impossible ranges, oversized files; the directories given to pytest."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml

from fixtures import settings
from harness.errors import QuorumError, TopologyError
from harness.gate import Policy
from harness.gate.policy import PolicyError
from harness.inventory.load import InventoryError, load_inventory
from harness.topology import load_topology
from tests.unit.test_inventory import example, usable

ROOT = Path(__file__).resolve().parents[2]


def ha3() -> dict:
    return yaml.safe_load((ROOT / "clusters" / "ha3.yaml").read_text())


def refused_topology(tmp_path: Path, text: str) -> str:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises(TopologyError) as error:
        load_topology(path)
    return f"{error.value.problem}\nfix: {error.value.fix}"


def refused_inventory(tmp_path: Path, data: dict) -> str:
    with pytest.raises(InventoryError) as error:
        load_inventory(usable(tmp_path, data))
    return str(error.value)


@pytest.mark.parametrize("flag", ["--audit-log-path\n", "--kubeconfig\n", "--v\n"])
def test_a_flag_name_with_a_trailing_newline_is_refused_and_cannot_pass_the_denied_list(tmp_path, flag):
    data = ha3()
    data["apiserver"]["extra_flags"] = {flag: "/tmp/x"}
    says = refused_topology(tmp_path, yaml.safe_dump(data))
    assert "apiserver.extra_flags" in says and "holds a control character" in says


@pytest.mark.parametrize("where", [("hosts", 0, "name"), ("hosts", 0, "address"), ("ssh", "user"),
                                   ("components", "etcd", "unit"), ("components", "kube-apiserver", "manifest_dir"),
                                   ("etcd", "endpoints", 0), ("api_endpoint",), ("name",)])
def test_an_inventory_value_with_a_trailing_newline_is_refused(tmp_path, where):
    data = example()
    parent = data
    for step in where[:-1]:
        parent = parent[step]
    parent[where[-1]] = f"{parent[where[-1]]}\n"
    says = refused_inventory(tmp_path, data)
    assert ".".join(map(str, where[:2])) in says and str(where[-1]) in says and "holds a control character" in says
    assert says.count("\n  - ") == 1, says  # that one problem, named for the kind of component the inventory says


def test_an_api_endpoint_whose_port_is_out_of_range_is_refused(tmp_path):
    data = example()
    data["api_endpoint"] = "https://10.0.0.10:99999"
    assert "Port out of range" in refused_inventory(tmp_path, data)


def test_an_etcd_ca_that_is_not_a_certificate_is_named_before_anything_connects(tmp_path):
    data = example()
    data["etcd"].update(on_hosts=False, ca="ca.crt", cert="client.crt", key="client.key")
    for name in ("ca.crt", "client.crt", "client.key"):
        (tmp_path / name).write_text("not a certificate\n")
        (tmp_path / name).chmod(0o600)
    says = refused_inventory(tmp_path, data)
    assert "etcd.ca" in says and "is not a PEM certificate" in says and "etcd.key" in says


def test_an_integer_of_5000_digits_is_refused_with_its_line_not_a_traceback(tmp_path):
    says = refused_topology(tmp_path, yaml.safe_dump(ha3()) + f"\nextra: {'9' * 5000}\n")
    assert "is not valid YAML" in says and "an integer of 5000 digits" in says and "line" in says


@pytest.mark.parametrize("date", ["2026-13-45", "2026-02-30"])
def test_a_date_that_is_no_date_is_named_by_its_field(tmp_path, date):
    data = ha3()
    says = refused_topology(tmp_path, yaml.safe_dump(data).replace("name: ha3", f"name: {date}"))
    assert "name:" in says and date in says
    policy = tmp_path / "gate.yaml"
    policy.write_text(f"required_suites: [etcd]\nknown_failures:\n  - test: scenarios/etcd/test_x.py::test_y\n"
                      f"    until: {date}\n    reason: r\n")
    with pytest.raises(PolicyError, match="known_failures.0.until"):
        Policy.load(policy)


def test_a_key_given_twice_is_refused_not_silently_overwritten(tmp_path):
    text = (ROOT / "clusters" / "ha3.yaml").read_text().replace("disposable: true", "disposable: true\ndisposable: false")
    assert "the key 'disposable' is given twice" in refused_topology(tmp_path, text)
    with pytest.raises(PolicyError, match="given twice"):
        policy = tmp_path / "gate.yaml"
        policy.write_text("required_suites: [etcd]\nrequired_suites: [etcd, load]\n")
        Policy.load(policy)


def test_a_file_larger_than_any_topology_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "big.yaml"
    with path.open("w") as out:
        out.write(yaml.safe_dump(ha3()))
        out.write("# " + "x" * 2_000_000 + "\n")
    with pytest.raises(TopologyError, match="more than a topology file can be"):
        load_topology(path)


@pytest.mark.parametrize("count", [65, 10_002])
def test_more_hosts_than_quorum_builds_is_refused_at_once(tmp_path, count):
    data = ha3()
    data["network"]["subnet"] = "10.213.0.0/16"
    data["hosts"] += [{"name": f"h{i}", "roles": ["spare"]} for i in range(count - len(data["hosts"]))]
    data["etcd"]["allow_even_members"] = True
    says = refused_topology(tmp_path, yaml.safe_dump(data))
    assert f"{count} hosts, more than Quorum builds (64)" in says


def test_more_hosts_than_the_subnet_has_addresses_for_is_refused(tmp_path):
    data = ha3()
    data["network"]["subnet"] = "10.213.7.0/27"  # 32 addresses: .10 to .30 for hosts without one
    data["hosts"] += [{"name": f"h{i}", "roles": ["spare"]} for i in range(30)]
    says = refused_topology(tmp_path, yaml.safe_dump(data))
    assert "35 hosts without an address, but 10.213.7.0/27 has 21 free addresses" in says


@pytest.mark.parametrize("change, says", [
    ({"port": True}, "port: true is a yes or no"),
    ({"port": 2379}, "apiserver.port 2379 is etcd client's port"),
    ({"port": 10257}, "controller manager's port"),
    ({"service_cidr": "0.0.0.0/0"}, "must be a private range from /12"),
    ({"service_cidr": "8.8.8.0/24"}, "must be a private range"),
    ({"service_cidr": "10.213.3.0/24"}, "overlaps network.subnet"),
])
def test_apiserver_settings_that_cannot_work_are_refused(tmp_path, change, says):
    data = ha3()
    data["apiserver"].update(change)
    assert says in refused_topology(tmp_path, yaml.safe_dump(data))


def test_a_yes_or_no_is_still_taken_where_a_field_asks_for_one(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(ha3()))
    assert load_topology(path).disposable is True


@pytest.mark.parametrize("make, says", [
    (lambda d: (d.write_text("x"), d)[1], "is a file, not a directory"),
    (lambda d: (d.symlink_to(d.parent), d)[1], "is a symbolic link"),
    (lambda d: Path(f"{d}\nx"), "holds a control character"),
    (lambda d: Path("/"), "the file system's root"),
])
def test_history_and_run_directories_are_checked_as_results_are(tmp_path, make, says):
    path = make(tmp_path / "given")
    with pytest.raises(pytest.UsageError, match=says):
        settings._directory("--history-dir", str(path))
    with pytest.raises(pytest.UsageError, match=says):
        settings._run_directory(str(path), str(tmp_path / "histories"))


def test_a_run_directory_inside_reports_or_the_histories_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(pytest.UsageError, match="inside .*reports.*private keys"):
        settings._run_directory(str(tmp_path / "reports" / "run"), str(tmp_path / "h"))
    with pytest.raises(pytest.UsageError, match="private keys"):
        settings._run_directory(str(tmp_path / "h" / "run"), str(tmp_path / "h"))
    assert settings._run_directory(str(tmp_path / "run"), str(tmp_path / "h")) == tmp_path / "run"


def test_every_loader_of_a_user_file_answers_with_a_quorum_error(tmp_path):
    """The same odd file given as a topology, an inventory and a policy: each refuses it as its own error."""
    path = tmp_path / "odd.yaml"
    path.write_text("a: 1\na: 2\n")
    for load in (load_topology, load_inventory, Policy.load):
        with pytest.raises(QuorumError, match="given twice"):
            load(path)
    assert os.path.getsize(path) < 100
    assert copy.deepcopy(example())["name"] == "staging"
