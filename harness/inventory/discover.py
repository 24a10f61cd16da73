"""What runs on one host of an inventory: each control-plane component's process, its live flags and version,
found the same way whether a kubelet (static pod), systemd or something else started it.

A component is the process whose executable has the component's name (kube-apiserver, etcd, ...) in the host's own
network namespace: static pods of the control plane use the host network, and a process in another namespace
belongs to a container or to another host sharing the kernel (the stand-in staging of docs/target.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.components.flags import parse_flags
from harness.inventory.model import HostRole, HowItRuns, Inventory, StaticPod, SystemdUnit
from harness.remote.ssh import RemoteError, SshHost
from harness.topology import Component

CONTROLLER_COMPONENTS = (Component.APISERVER, Component.CONTROLLER_MANAGER, Component.SCHEDULER)

# A fixed script; the component names reach it as positional arguments, never pasted into it. Prints
# "<name> <pid>" for each process of the host's network namespace whose executable is named <name>. As another user
# it would find nothing (root's /proc/PID/exe cannot be read) and call every component stopped: it refuses instead.
FIND_PIDS = r"""
[ "$(id -u)" = 0 ] || { echo "$(id -un) is not root: the processes of other users cannot be read" >&2; exit 3; }
net=$(readlink /proc/self/ns/net)
for d in /proc/[0-9]*; do
  exe=$(readlink "$d/exe" 2>/dev/null) || continue
  exe=${exe% (deleted)}
  for name in "$@"; do
    if [ "${exe##*/}" = "$name" ] && [ "$(readlink "$d/ns/net" 2>/dev/null)" = "$net" ]; then
      echo "$name ${d#/proc/}"
    fi
  done
done
"""


@dataclass
class Found:
    host: str
    component: Component
    how: str  # static-pod, systemd, process
    pids: list[int] = field(default_factory=list)
    flags: dict[str, str] = field(default_factory=dict)
    version: str = ""
    problem: str = ""  # empty when the component runs as the inventory says
    fix: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def components_on(inventory: Inventory, host: str) -> list[Component]:
    roles = next(h.roles for h in inventory.hosts if h.name == host)
    return ([Component.ETCD] if HostRole.ETCD in roles else []) + \
        (list(CONTROLLER_COMPONENTS) if HostRole.CONTROLLER in roles else [])


def find_pids(ssh: SshHost, names: list[str]) -> dict[str, list[int]]:
    result = ssh.run(["sh", "-c", FIND_PIDS, "sh", *names])
    if not result.ok:
        raise RemoteError(f"{ssh.where}: cannot list its processes: {result.stderr.strip()}",
                          "the user needs root or passwordless sudo (ssh.sudo: true) to read /proc of root's processes")
    pids: dict[str, list[int]] = {name: [] for name in names}
    for line in result.stdout.splitlines():
        name, _, pid = line.partition(" ")
        if name in pids and pid.isdigit():
            pids[name].append(int(pid))
    return pids


def _version(ssh: SshHost, pid: int) -> str:
    exe = ssh.run(["readlink", f"/proc/{pid}/exe"]).stdout.strip().removesuffix(" (deleted)")
    out = ssh.run([exe, "--version"], timeout_s=10).stdout.strip().splitlines() if exe else []
    return out[0][:120] if out else ""


def _how_it_is_started(ssh: SshHost, component: Component, how: HowItRuns, found: Found) -> None:
    """Checks what the inventory says starts the component: the manifest, the unit."""
    if isinstance(how, StaticPod):
        manifest = f"{how.manifest_dir}/{component.value}.yaml"
        if not ssh.run(["test", "-f", manifest]).ok:
            found.problem = f"no static pod manifest {manifest}"
            found.fix = "correct components.<name>.manifest_dir (the kubelet's staticPodPath)"
    elif isinstance(how, SystemdUnit):
        main = ssh.run(["systemctl", "show", "--property=MainPID", "--value", how.unit]).stdout.strip()
        if not main.isdigit() or int(main) not in found.pids:
            found.problem = f"systemd unit {how.unit} does not run {component.value} (its main pid: {main or 'none'})"
            found.fix = "correct components.<name>.unit (systemctl list-units on the host)"


def discover(inventory: Inventory, ssh: SshHost) -> list[Found]:
    """Each component the host should run, as found there."""
    wanted = components_on(inventory, ssh.name)
    pids = find_pids(ssh, [c.value for c in wanted])
    found_all = []
    for component in wanted:
        how = inventory.components[component]
        found = Found(ssh.name, component, how.runs_as, pids[component.value])
        if len(found.pids) != 1:
            found.problem = (f"{component.value} is not running" if not found.pids else
                             f"{len(found.pids)} {component.value} processes (pids {found.pids})")
            found.fix = "start it, or correct the host's roles" if not found.pids else "stop the strays"
        else:
            argv = ssh.read_file(f"/proc/{found.pids[0]}/cmdline").decode(errors="replace").split("\0")
            found.flags = parse_flags(a for a in argv[1:] if a)
            found.version = _version(ssh, found.pids[0])
        if found.ok:
            _how_it_is_started(ssh, component, how, found)
        found_all.append(found)
    return found_all
