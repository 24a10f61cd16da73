"""Each component's keeper on a remote target (harness/target/keeper.py), as the inventory says what runs it: a
static pod's kubelet (harness/components/static_pod_keeper.py) or systemd (harness/components/systemd_keeper.py).
A plain process has no keeper Quorum knows, so nothing can be held, overridden or promised for it. Everything
Quorum moves aside or marks is kept on the host, under FILES, so `quorum heal --target` finds it from any machine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.clients.kubeapi import PodRestarts
from harness.components.static_pod import StaticPods
from harness.components.static_pod_keeper import StaticPodKeeper
from harness.components.systemd_keeper import SystemdKeeper, SystemdUnits
from harness.errors import ClusterError
from harness.inventory.model import StaticPod, SystemdUnit
from harness.target.keeper import Keeper
from harness.target.protocol import Unsupported
from harness.topology import Component

if TYPE_CHECKING:
    from harness.backends.remote.target import RemoteTarget

FILES = "/var/lib/quorum/"  # on each host: held manifests, their originals, markers, the host journal
NO_KEEPER_FIX = "describe it as a static pod or a systemd unit if a kubelet or systemd runs it (docs/target.md)"
UNITS = SystemdUnits(FILES)


class NoKnownKeeper(Keeper):
    """A component the inventory says runs as a plain process: it is not held or overridden, so there is nothing
    to release, restore or sweep; whatever needs a keeper is Unsupported, with the fix."""

    OFFERS = frozenset()  # nothing to hold or override it with

    def __init__(self, component: Component, runs_as: str) -> None:
        self.component = component
        self.runs_as = runs_as

    def _unsupported(self, what: str) -> Unsupported:
        return Unsupported(f"{self.component.value} runs as {self.runs_as}: nothing Quorum knows restarts it, so "
                           f"{what}", NO_KEEPER_FIX)

    def hold(self, host: str, signal: str = "SIGKILL") -> None:
        raise self._unsupported("it can neither be kept down nor restarted with other flags")

    def release(self, host: str) -> bool:
        raise self._unsupported("it can neither be kept down nor restarted with other flags")

    def held(self, host: str) -> bool:
        return False

    def command_line(self, host: str) -> None:
        return None

    def override(self, host: str, argv: list[str]) -> None:
        raise self._unsupported("it can neither be kept down nor restarted with other flags")

    def restore(self, host: str) -> bool:
        raise self._unsupported("it can neither be kept down nor restarted with other flags")

    def restarts(self, host: str) -> int:
        raise self._unsupported(f"how often it restarted on {host} is not known")

    def restart_budget_s(self, *, kill: int = 1, earlier_restarts: int = 0) -> float:
        raise self._unsupported("what restarts it, and how soon, is not known")

    def held_return_s(self, host: str) -> float:
        raise self._unsupported("it can neither be kept down nor restarted with other flags")

    def log_tail(self, host: str, lines: int = 80) -> str:
        return ""

    def sweep(self, host: str) -> list[str]:
        return []


def keeper_of(target: "RemoteTarget", component: Component) -> Keeper:
    """What keeps the component running on the target's hosts, as its inventory says."""
    runs = target.topology.components[component]
    if isinstance(runs, SystemdUnit):
        return SystemdKeeper(target, UNITS, component, runs.unit, lambda: target.component_hosts(component))
    if isinstance(runs, StaticPod):
        return StaticPodKeeper(target, StaticPods(runs.manifest_dir, FILES), component,
                               lambda host: mirror_pod(target, component, host), lambda host: node_name(target, host))
    return NoKnownKeeper(component, runs.runs_as)


def node_name(target: "RemoteTarget", host: str) -> str:
    """The kubelet's name for the host: its hostname, unless the kubelet was told otherwise."""
    return target.exec(host, ["hostname"]).strip()


def mirror_pod(target: "RemoteTarget", component: Component, host: str) -> PodRestarts:
    node = node_name(target, host)
    pod = target.api.mirror_pod(component.value, node)
    if pod is None:
        raise ClusterError(f"no mirror pod {component.value}-{node} for {host} through {target.topology.api_endpoint}",
                           "the kubelet names a static pod <name>-<node name>: is the node named otherwise? "
                           "(quorum inventory check shows whether the API answers)")
    return pod
