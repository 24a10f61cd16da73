"""The docker backend's hosts: each topology host a privileged container from the node base image.

Hosts sit on a Quorum-created Docker network with the topology's subnet and addresses. Components run
inside their host's container under the same supervisor as on the process backend (the container's
command starts one keeper per component). Containers share the host's pid namespace, so component
pids mean the same inside and out and the process faults (kill, pause, stop, flag changes) work
unchanged; network, mounts, hostname and cgroups are the container's own, so `docker kill`, `pause`
and `restart` act on a whole node. Each container's network namespace is attached under the name
the process backend would use, so network faults, link shaping and `exec` are the same code.

Safety (GOTCHAS): the Docker bridge holds the subnet's gateway address in the root namespace, the
containers lose their default route, and a FORWARD rule drops anything from the bridge to elsewhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

from python_on_whales.exceptions import DockerException

import harness
from harness.backends import orphans
from harness.backends.process.build import Hosts, Say
from harness.components import ComponentSpec
from harness.backends.docker import base_image
from harness.backends.docker.engine import DOCKER_CLIENT, DockerUnavailable, Engine, client, ensure_engine
from harness.errors import ClusterError
from harness.net import netns
from harness.shell import run
from harness.run.state import RunState
from harness.toolchain.cache import default_root
from harness.topology import Topology, bridge_address

LABEL = "io.quorum.run"


def container_name(run_id: str, host: str) -> str:
    return f"quorum-{run_id}-{host}"


def network_name(run_id: str) -> str:
    return f"quorum-{run_id}"


def bridge_name(run_id: str) -> str:
    return f"{netns.PREFIX_DOCKER_BRIDGE}{run_id}"


def egress_rule(run_id: str) -> list[str]:
    bridge = bridge_name(run_id)
    return ["FORWARD", "-i", bridge, "!", "-o", bridge, "-m", "comment", "--comment", netns.comment(run_id), "-j", "DROP"]


def source_root() -> Path:
    """The directory holding the `harness` package, mounted into every host for the supervisor."""
    return Path(harness.__file__).resolve().parent.parent


class ContainerHosts(Hosts):
    """Creates the network and the host containers of one run; journals each object before creating it."""

    in_containers = True

    def __init__(self, state: RunState, engine: Engine | None = None) -> None:
        super().__init__(state)
        self.engine = engine or ensure_engine()
        self.docker = self.engine.client

    def create(self, topology: Topology, say: Say = lambda _: None) -> None:
        subnet = topology.network.subnet
        say(f"docker network {subnet} on bridge {bridge_name(self.state.run_id)}")
        image, took = base_image.build(self.engine, say=say)
        if took:
            say(f"built {image} in {took:.0f}s")
        self.image = image
        name, bridge = network_name(self.state.run_id), bridge_name(self.state.run_id)
        with netns.claim_subnet(subnet, reclaim=orphans.reclaim):
            self.state.record("docker_network", name)
            self.state.record("bridge", bridge)
            self.docker.network.create(name, driver="bridge", subnet=str(subnet), gateway=str(bridge_address(subnet)),
                                       labels={LABEL: self.state.run_id},
                                       options=[f"com.docker.network.bridge.name={bridge}"])
        rule = egress_rule(self.state.run_id)
        self.state.record("iptables", rule)
        run(["iptables", "-w", "-I", rule[0], "1", *rule[1:]])  # traffic inside the bridge: Docker's own ACCEPT rule

    def start(self, topology: Topology, run_dir: Path, specs: list[ComponentSpec]) -> None:
        """Each container's command starts the keepers of its components, in the container's namespaces."""
        for host in topology.hosts:  # each finds its components' keepers in the run directory (hostinit.py)
            self._run_host(topology, run_dir, host.name)

    def _run_host(self, topology: Topology, run_dir: Path, host: str) -> None:
        name = container_name(self.state.run_id, host)
        self.state.record("container", name)
        src, binaries = source_root(), default_root() / "bin"
        self.docker.run(
            self.image, ["python3", "-m", "harness.backends.docker.hostinit", str(run_dir), host],
            name=name, hostname=host, detach=True, privileged=True, pid="host",
            networks=[network_name(self.state.run_id)], ip=str(topology.address_of(topology.host(host))),
            volumes=[(str(run_dir), str(run_dir), "rw"), (str(binaries), str(binaries), "ro"), (str(src), str(src), "ro")],
            envs={"PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"},
            labels={LABEL: self.state.run_id}, restart="no",
        )
        attach(self.state, host, topology.network.link_rate_mbit)


def attach(state: RunState, host: str, link_rate_mbit: float | None = None) -> None:
    """Name the container's network namespace like the process backend's and lock it into the subnet.
    Needed again after the container restarts (it then has a new namespace)."""
    docker = client()
    pid = docker.container.inspect(container_name(state.run_id, host)).state.pid
    if not pid:
        raise ClusterError(f"host container {container_name(state.run_id, host)} is not running",
                           f"docker logs {container_name(state.run_id, host)}")
    name = netns.netns_name(state.run_id, host)
    if name not in state.netns:
        state.record("netns", name)
    run(["ip", "netns", "delete", name], check=False)
    run(["ip", "netns", "attach", name, str(pid)])
    run(["ip", "-n", name, "route", "del", "default"], check=False)
    if link_rate_mbit:
        netns.shape(name, link_rate_mbit)


def teardown(state: RunState) -> list[str]:
    """Remove the run's containers and network (components die with their containers). Idempotent;
    without an engine (never started, or gone) there is nothing of Docker's left to remove."""
    removed: list[str] = []
    try:
        docker = client()
        for name in state.containers:
            if docker.container.exists(name):
                docker.container.remove(name, force=True, volumes=True)
                removed.append(f"container {name}")
        if state.docker_network and network_exists(state.docker_network):
            docker.network.remove(state.docker_network)
            removed.append(f"docker network {state.docker_network}")
    except (DockerException, DockerUnavailable) as error:
        print(f"quorum: docker teardown: {error}", file=sys.stderr)
    return removed


def remove_run(run_id: str) -> list[str]:
    """Everything of Docker's that one run left, found by its labels alone (the run's state may be long gone): its
    host containers, then its network (a kind run's nodes go first, by the kind backend's reclaim)."""
    if not engine_answers():
        return []
    removed = []
    docker = client()
    try:
        for container in docker.container.list(all=True, filters=[("label", f"{LABEL}={run_id}")]):
            name = container.name
            docker.container.remove(name, force=True, volumes=True)
            removed.append(f"container {name}")
        for network in docker.network.list(filters=[("label", f"{LABEL}={run_id}")]):
            name = network.name
            docker.network.remove(name)
            removed.append(f"docker network {name}")
    except DockerException as error:
        removed.append(f"(run {run_id}'s Docker objects not all removed: {error})")
    return removed


def network_exists(name: str) -> bool:
    # by listing: Docker 20.10 words a missing network so that python-on-whales' network.exists raises
    return name in {network.name for network in client().network.list(filters=[("name", name)])}


def engine_answers() -> bool:
    """Docker is installed and its engine runs (nothing of Docker's can be left over otherwise)."""
    if not Path(DOCKER_CLIENT).exists():
        return False
    try:
        return bool(client().system.info().server_version)
    except DockerException:
        return False


def leftovers() -> list[str]:
    """Containers and networks of any Quorum run, if an engine answers (`quorum down --all`)."""
    removed: list[str] = []
    if not engine_answers():
        return []
    docker = client()
    try:
        for container in docker.container.list(all=True, filters=[("label", LABEL)]):
            name = container.name  # before the removal: a stale attribute makes python-on-whales inspect again
            docker.container.remove(name, force=True)
            removed.append(f"container {name}")
        for network in docker.network.list(filters=[("label", LABEL)]):
            name = network.name
            docker.network.remove(name)
            removed.append(f"docker network {name}")
    except DockerException:
        return removed
    return removed
