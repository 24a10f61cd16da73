"""Inventory files (harness/inventory): every value that reaches a command line or a connection is checked, and
every problem names the field and the fix, before anything connects."""

import copy
from pathlib import Path

import pytest
import yaml

from harness.inventory.load import InventoryError, load_inventory
from harness.inventory.model import HostKeyPolicy, HostRole

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "staging-inventory.yaml"


def example() -> dict:
    return yaml.safe_load(EXAMPLE.read_text())


def usable(tmp_path: Path, data: dict) -> Path:
    """`data` written beside the files it names, each present and private."""
    for name in ("kubeconfig", "key", "known_hosts"):
        (tmp_path / name).write_text("x")
        (tmp_path / name).chmod(0o600)
    data = copy.deepcopy(data)
    data["kubeconfig"]["path"], data["ssh"]["key_file"], data["ssh"]["known_hosts"] = "kubeconfig", "key", "known_hosts"
    path = tmp_path / "inventory.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def problem(tmp_path: Path, data: dict) -> str:
    with pytest.raises(InventoryError) as error:
        load_inventory(usable(tmp_path, data))
    return str(error.value)


def test_the_example_reads_with_its_hosts_roles_and_per_host_ssh(tmp_path):
    inventory = load_inventory(usable(tmp_path, example()))
    assert inventory.name == "staging" and inventory.disposable is False
    assert inventory.hosts_with(HostRole.ETCD) == ["controller-0", "controller-1", "controller-2"]
    assert inventory.ssh_for("controller-2").port == 2222 and inventory.ssh_for("controller-0").port == 22
    assert inventory.ssh_for("controller-2").user == "core" and inventory.ssh.host_key_policy == HostKeyPolicy.STRICT
    assert inventory.limits.window() is not None


def test_a_target_is_not_disposable_unless_it_says_so(tmp_path):
    data = example()
    del data["disposable"]
    assert load_inventory(usable(tmp_path, data)).disposable is False


@pytest.mark.parametrize("where, value, says", [
    (("hosts", 0, "name"), "Controller_0", "hosts.0.name: 'Controller_0' is not a host name"),
    (("hosts", 0, "address"), "10.0.0.11; reboot", "is not an IP address or a DNS name"),
    (("ssh", "user"), "core --help", "is not a login name"),
    (("components", "etcd"), {"runs_as": "systemd", "unit": "etcd; rm -rf /"}, "is not a systemd service name"),
    (("components", "kube-apiserver"), {"runs_as": "static-pod", "manifest_dir": "etc/kubernetes"},
     "is not an absolute path"),
    (("components", "kube-apiserver"), {"runs_as": "static-pod", "manifest_dir": "/etc/../root"}, "climbs out"),
    (("etcd", "key"), "/etc/ssl/$(id).key", "is not an absolute path of plain characters"),
    (("limits", "window_utc"), "10pm-4am", "write HH:MM-HH:MM in UTC"),
    (("limits", "allowed_hosts"), ["controller-9"], "unknown hosts ['controller-9']"),
    (("api_endpoint",), "http://10.0.0.10:6443", "is not an https URL of the API"),
    (("kubeconfig", "contxt"), "admin", "kubeconfig.contxt: unknown key"),
])
def test_a_bad_value_names_its_field_and_the_fix(tmp_path, where, value, says):
    data = example()
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    text = problem(tmp_path, data)
    assert says in text and "fix" in text, text


def test_hosts_are_named_once_a_controller_exists_and_every_component_is_described(tmp_path):
    data = example()
    data["hosts"][1]["name"] = "controller-0"
    assert "host names repeat: ['controller-0']" in problem(tmp_path, data)
    data = example()
    for host in data["hosts"]:
        host["roles"] = ["etcd"]
    assert "no host has the controller role" in problem(tmp_path, data)
    data = example()
    for host in data["hosts"]:
        host["roles"] = ["controller"]
    assert "no host has the etcd role" in problem(tmp_path, data)
    data = example()
    del data["components"]["kube-scheduler"]
    assert "components: missing ['kube-scheduler']" in problem(tmp_path, data)


def test_files_on_this_machine_must_exist_and_keys_be_private(tmp_path):
    path = usable(tmp_path, example())
    (tmp_path / "key").chmod(0o644)
    (tmp_path / "kubeconfig").unlink()
    (tmp_path / "known_hosts").unlink()
    with pytest.raises(InventoryError) as error:
        load_inventory(path)
    text = str(error.value)
    assert f"chmod 600 {tmp_path / 'key'}" in text
    assert f"kubeconfig.path: {tmp_path / 'kubeconfig'} does not exist" in text
    assert "host_key_policy is strict" in text


def test_a_missing_or_broken_file_is_an_error_not_a_traceback(tmp_path):
    with pytest.raises(InventoryError, match="inventory file .* does not exist"):
        load_inventory(tmp_path / "nope.yaml")
    (tmp_path / "bad.yaml").write_text("name: [unclosed")
    with pytest.raises(InventoryError, match="not valid YAML"):
        load_inventory(tmp_path / "bad.yaml")
