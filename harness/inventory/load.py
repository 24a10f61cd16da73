"""Read an inventory file: the model's rules, then the files it names on this machine (present, private keys
not readable by others, as ssh itself demands). Errors list every problem with its fix, before anything connects."""

from __future__ import annotations

import stat
from pathlib import Path

from harness.errors import QuorumError
from harness.inventory.model import HostKeyPolicy, Inventory
from harness.topology import validated
from harness.userfile import read_yaml

EXAMPLE = "docs/examples/staging-inventory.yaml"


class InventoryError(QuorumError):
    """An inventory file is invalid, or names files this machine does not have."""


def local_path(value: str, base: Path) -> Path:
    """A path on this machine as the inventory means it: ~ expanded, relative to the inventory's folder."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else (base / path)


def _private(path: Path, field: str) -> str | None:
    if not path.is_file():
        return f"{field}: {path} does not exist; fix: give the path of the file on this machine"
    if path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        return f"{field}: {path} is readable by others (mode {stat.S_IMODE(path.stat().st_mode):04o}); fix: chmod 600 {path}"
    return None


def file_problems(inventory: Inventory, base: Path) -> list[str]:
    """What is wrong with the files on this machine the inventory names (empty: nothing)."""
    problems = []
    kubeconfig = local_path(inventory.kubeconfig.path, base)
    problems.append(_private(kubeconfig, "kubeconfig.path"))
    keys = {("ssh.key_file", inventory.ssh.key_file)} | {(f"hosts.{h.name}.ssh.key_file", h.ssh.key_file)
                                                          for h in inventory.hosts}
    for field, value in sorted(k for k in keys if k[1]):
        problems.append(_private(local_path(value, base), field))
    policies = {inventory.ssh_for(h.name).host_key_policy for h in inventory.hosts}
    known_hosts = local_path(inventory.ssh.known_hosts, base)
    if HostKeyPolicy.STRICT in policies and not known_hosts.is_file():
        problems.append(f"ssh.known_hosts: {known_hosts} does not exist and host_key_policy is strict; fix: add the "
                        "hosts' keys to it (ssh-keyscan, checked against the hosts' fingerprints), or use "
                        "host_key_policy: accept-new")
    if inventory.etcd and not inventory.etcd.on_hosts:
        for field in ("ca", "cert"):
            path = local_path(getattr(inventory.etcd, field), base)
            if not path.is_file():
                problems.append(f"etcd.{field}: {path} does not exist; fix: copy it here, or set etcd.on_hosts: true")
            else:
                problems.append(_pem(path, f"etcd.{field}", "certificate"))
        key = local_path(inventory.etcd.key, base)
        problems.append(_private(key, "etcd.key") or _pem(key, "etcd.key", "private key"))
    return [p for p in problems if p]


def _pem(path: Path, field: str, kind: str) -> str | None:
    """A problem if the file is not a PEM `kind` ("certificate" or "private key") that Python's TLS can load."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        data = path.read_bytes()
        if kind == "certificate":
            x509.load_pem_x509_certificates(data)
        else:
            load_pem_private_key(data, password=None)
    except (OSError, ValueError, TypeError) as error:
        return (f"{field}: {path} is not a PEM {kind} ({str(error)[:120]}); fix: give the member's PEM {kind} file "
                "(as etcdctl --cacert/--cert/--key take it)")
    return None


def load_inventory(path: str | Path) -> Inventory:
    """The validated inventory, or an InventoryError listing every problem and its fix."""
    path = Path(path)
    data = read_yaml(path, InventoryError, "inventory file", EXAMPLE)
    try:
        inventory = validated(Inventory, data, str(path), EXAMPLE)
    except QuorumError as error:
        raise InventoryError(error.problem, error.fix) from None
    problems = file_problems(inventory, path.resolve().parent)
    if problems:
        raise InventoryError(f"{path} names files that cannot be used:\n" + "\n".join(f"  - {p}" for p in problems),
                             f"fix the files or edit {path} as the lines above say")
    return inventory
