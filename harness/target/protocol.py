"""The Target: one cluster under test, as every fault, monitor, check and scenario sees it, whatever runs it.

A backend (harness/backends/<name>/) implements it; nothing outside the backends asks which backend it is.
Components are named by `Component` (or its value) and hosts by the names the target gives them (`hosts()`).
Methods a backend cannot offer raise `Unsupported` naming the capability; `capabilities()` says beforehand, and
`lacks()` turns a missing capability into the reason a fault or scenario gives.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from harness.components.kwok import HOLLOW_LABEL
from harness.errors import Unsupported  # noqa: F401 - the protocol's error, defined beside QuorumError
from harness.run.state import RunState
from harness.target.capabilities import Capability
from harness.target.clients import Clients
from harness.target.health import Health
from harness.target.hosts import HostRole, Hosts  # noqa: F401 - HostRole: imported from here too
from harness.target.keeper import Keeper
from harness.target.network import InHostNetwork, Network
from harness.target.power import Power
from harness.target.pods import PodContainers
from harness.target.promises import ConfiguredPromises
from harness.target.releases import ComponentReleases
from harness.target.self_hosted import SelfHostedRecovery
from harness.topology import Component

if TYPE_CHECKING:
    from harness.faults.base import Fault


def component_name(component: Component | str) -> str:
    return component.value if isinstance(component, Component) else component


def split_id(component_id: str) -> tuple[str, str]:
    """'<component>@<host>' -> (component, host)."""
    component, _, host = component_id.partition("@")
    if not host:
        raise KeyError(f"{component_id!r} names no host: write <component>@<host>, e.g. kube-scheduler@c1")
    return component, host


class Target(Hosts, Clients, ConfiguredPromises, SelfHostedRecovery, PodContainers, ComponentReleases, ABC):
    run_dir: Path
    state: RunState
    topology: Any  # the validated model the cluster was built from (its settings: leases, etcd timings, ...)
    health_poll_s: float = 0.1  # how often a health check may be repeated while waiting (each may be a remote call)
    poll_interval_s: float = 1.0  # between whole-cluster health checks while waiting for it to heal itself
    settle_s: float = 60.0  # how long the cluster may take to heal itself after a test before it is rebuilt

    # ---- identity ------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.topology.name

    @property
    def run_id(self) -> str:
        return self.state.run_id

    @property
    def backend(self) -> str:
        """For display only (reports, status): never branch on it."""
        return self.state.backend

    @property
    def disposable(self) -> bool:
        """Destructive faults refuse a target that is not marked disposable."""
        return bool(getattr(self.topology, "disposable", False))

    # what the backend offers beyond its parts' (each part adds its own: a Power part NODE_POWER, a keeper HOLD)
    CAPABILITIES: ClassVar[frozenset[Capability]] = frozenset()
    # the kinds of keeper the target picks from, per component (keeper()): a kind it may pick adds what it offers
    KEEPERS: ClassVar[tuple[type[Keeper], ...]] = ()
    # the parts, each built with the target when first used: the network's rules and shaping (most targets' are
    # iptables and tc inside the hosts) and whole hosts' power, if the backend can power them off
    NETWORK: ClassVar[type[Network] | None] = InHostNetwork
    POWER: ClassVar[type[Power] | None] = None
    HEALTH: ClassVar[type[Health]]  # every target says how its cluster's health is looked at

    @classmethod
    def capabilities(cls) -> frozenset[Capability]:
        """What the target can do: its parts' capabilities and the backend's own; every target signals its
        components' processes on its hosts (`signal`), and its API takes objects of Quorum's own (`work-probes`;
        a backend refuses it for a topology that does not allow them, Backend.topology_lacks)."""
        parts = (cls.NETWORK, cls.POWER, cls.HEALTH, *cls.KEEPERS)
        return cls.CAPABILITIES.union({Capability.SIGNAL, Capability.WORK_PROBES}, *(part.capabilities() for part in parts if part is not None))

    @classmethod
    def lacks(cls, *needed: Capability) -> str | None:
        """Why the target cannot do what needs `needed` (None when it can)."""
        missing = [c for c in needed if c not in cls.capabilities()]
        if not missing:
            return None
        return "; ".join(f"it needs {c.value} ({c.meaning})" for c in missing) + \
            f", which the {cls.backend_name()} backend does not offer"

    @classmethod
    def backend_name(cls) -> str:
        return getattr(cls, "BACKEND_NAME", cls.__name__)

    def require(self, *needed: Capability) -> None:
        reason = self.lacks(*needed)
        if reason:
            raise Unsupported(reason, "run it on a backend that offers it (docs/design.md lists them)")

    def describe(self) -> dict[str, str]:
        """What the report's environment says about the running cluster: its name, endpoint and versions as the
        cluster itself reports them (a version it does not answer with is left out)."""
        facts = {"cluster": self.name, "api_endpoint": self.api_endpoint}
        try:
            facts["kubernetes"] = str(self.api.get("/version", 5.0).json()["gitVersion"])
        except Exception:  # noqa: BLE001 - the report says what it could
            pass
        try:
            facts["etcd"] = str(self.etcd.post(self.etcd_urls[0], "/v3/maintenance/status", {}, 5.0)["version"])
        except Exception:  # noqa: BLE001
            pass
        return facts

    @abstractmethod
    def component_hosts(self, component: Component | str) -> list[str]:
        """The hosts that run `component`, in a stable order."""

    def admit(self, fault: "Fault", active: list["Fault"]) -> None:
        """Refuse, with a FaultError naming the limit, a planned fault the cluster's owner does not allow now (the
        Nemesis asks before the fault is journaled or acts); a cluster Quorum built allows every fault."""

    def remember_fault(self, fault: "Fault") -> None:
        """Keep the fault's journal record wherever else a heal may be run from (a remote target: on the hosts it
        touches), after the local journal's entry and before it acts; a cluster Quorum built needs only the local
        journal."""

    def forget_fault(self, fault: "Fault") -> None:
        """The fault is healed: drop what remember_fault kept."""

    def close(self) -> None:
        """Release what the target holds open (connections to remote hosts); it may be used again after."""

    def reload(self) -> "Target":
        """Read the run directory again (after a rebuild the run id and state change)."""
        for cached in [k for k in self.__dict__ if k not in ("run_dir",)]:
            self.__dict__.pop(cached, None)
        self.__init__(self.run_dir)  # type: ignore[misc]
        return self

    # ---- components ----------------------------------------------------------------------------

    @abstractmethod
    def pid(self, component: Component | str, host: str) -> int | None:
        """The component's pid on `host` as `signal` and `process_state` take it (None while it is down)."""

    @abstractmethod
    def signal(self, component: Component | str, host: str, signal: str, *, pid: int | None = None) -> None:
        """Send `signal` (e.g. SIGKILL) to the component's process on `host` (to exactly `pid` if given: a heal
        continues the process it paused, not a successor); a process that is gone needs nothing."""

    @abstractmethod
    def keeper(self, component: Component | str) -> Keeper:
        """What keeps the component running on the target's hosts (harness/target/keeper.py); the verbs below ask
        it, so a backend picks a keeper instead of writing them."""

    def hold(self, component: Component | str, host: str, signal: str = "SIGKILL") -> None:
        """Stop the component with `signal` and keep it down (nothing restarts it) until `release`."""
        self.keeper(component).hold(host, signal)

    def release(self, component: Component | str, host: str) -> None:
        """Let the component run again (idempotent)."""
        self.keeper(component).release(host)

    def held(self, component: Component | str, host: str) -> bool:
        return self.keeper(component).held(host)

    def command_line(self, component: Component | str, host: str) -> list[str]:
        """The command line the cluster is configured to run the component with (argv[0] first)."""
        argv = self.keeper(component).command_line(host)
        if argv is None:
            raise Unsupported(f"the keeper of {component_name(component)} does not say its command line",
                              "read the live one (live_flags)")
        return argv

    def override_command_line(self, component: Component | str, host: str, argv: list[str]) -> None:
        """Run the component with `argv` from now on (restarted as needed), until `restore_command_line`."""
        self.keeper(component).override(host, argv)

    def restore_command_line(self, component: Component | str, host: str) -> None:
        """Back to the configured command line (idempotent)."""
        self.keeper(component).restore(host)

    def ensure_running(self, component: Component | str, host: str) -> None:
        """After a kill: start the component if it is still down and nothing else will (a cluster whose own
        self-healing brings it back needs nothing)."""

    @abstractmethod
    def live_flags(self, component: Component | str) -> dict[str, dict[str, str]]:
        """Host -> the flags of the component running there, from its live command line."""

    def restarts(self, component: Component | str, host: str) -> int:
        """How often the cluster has restarted the component on `host` so far."""
        return self.keeper(component).restarts(host)

    def log_tail(self, component: Component | str, host: str, lines: int = 80) -> str:
        return self.keeper(component).log_tail(host, lines)

    # ---- what the component's keeper promises (the configuration's other promises: ConfiguredPromises) -------

    def restart_budget_s(self, component: Component | str, *, kill: int = 1, earlier_restarts: int = 0) -> float:
        """How long after the `kill`-th SIGKILL in a row the component is healthy again, as the cluster's own
        self-healing promises (its restart back-off plus the component's start-up allowance)."""
        return self.keeper(component).restart_budget_s(kill=kill, earlier_restarts=earlier_restarts)

    def back_off_reset_in_s(self, component: Component | str, host: str) -> float:
        """Seconds until a crash of the component on `host` meets the cluster's first restart back-off again (0:
        it does now): a back-off that grows with recent restarts (a kubelet's, Quorum's supervisor's) resets only
        after a long enough run."""
        return self.keeper(component).back_off_reset_in_s(host)

    def held_return_s(self, component: Component | str, host: str) -> float:
        """From `release` of the component held on `host` until it answers again, as the cluster's self-healing
        promises (asked after the release: how long it was held may count)."""
        return self.keeper(component).held_return_s(host)

    def config_file(self, component: Component | str, host: str) -> str:
        """The path, inside `host`, of the configuration file Quorum wrote for the component (Capability.RUN_FILES)."""
        self.require(Capability.RUN_FILES)
        raise NotImplementedError

    def hollow_players(self) -> dict[str, str]:
        """Each of the cluster's hollow nodes, with the value of its HOST_LABEL (harness/components/kwok.py) that
        the kwok controller playing it selects (none on a target without them)."""
        if Capability.HOLLOW_NODES not in self.capabilities():
            return {}
        return {n: h.name for h in self.topology.node_hosts for n in self.topology.hollow_node_names(h)}

    def hollow_nodes(self) -> list[str]:
        """The names of the cluster's hollow nodes (none on a target without them)."""
        return list(self.hollow_players())

    def hollow_selector(self) -> str:
        """The label selector, as a URL query, of this cluster's hollow nodes (and no one else's)."""
        return f"labelSelector={HOLLOW_LABEL}%3Dtrue"

    def secret_files(self) -> list[Path]:
        """Every private key and kubeconfig Quorum wrote for the cluster (Capability.RUN_FILES)."""
        self.require(Capability.RUN_FILES)
        raise NotImplementedError

    def etcd_data_dir(self, host: str) -> str:
        """Where the etcd member on `host` keeps its data, as a path inside the host (Capability.ETCD_DATA)."""
        self.require(Capability.ETCD_DATA)
        raise NotImplementedError

    def tool_path(self, name: str) -> str:
        """A toolchain binary (etcdctl, iperf3) as a path that `exec` can run inside any host."""
        raise Unsupported(f"the {self.backend_name()} backend's hosts do not carry Quorum's toolchain",
                          "run it on a backend whose hosts do (process, docker)")

    def supervisor_events(self) -> Path | None:
        """The file Quorum's supervisor appends component starts and exits to (Capability.SUPERVISOR), or None."""
        return None

    # ---- network (rules and shaping: the Network part, harness/target/network.py) -------------------

    @property
    def network(self) -> Network:
        """Packets dropped between hosts, links shaped, each undone by its tag (Capability.NETWORK, SHAPE)."""
        self.require(Capability.NETWORK)
        return self._part("_network", self.NETWORK)

    @abstractmethod
    def address(self, host: str) -> str | None:
        """The host's address on the cluster network (None while the host is down)."""

    @abstractmethod
    def link(self, host: str) -> str:
        """The host's network interface (what shaping and packet loss act on)."""

    def baseline_link_mbit(self, host: str) -> float | None:
        """The rate the cluster's own configuration shapes `host`'s link to (None: unshaped): what restoring a
        link after a fault goes back to."""
        return None

    # ---- whole hosts (the Power part: Capability.NODE_POWER, NODE_DISCONNECT) ----------------------

    @property
    def power(self) -> Power:
        """The hosts as machines that lose power, freeze or lose their interface (harness/target/power.py)."""
        self.require(Capability.NODE_POWER)
        return self._part("_power", self.POWER)

    def _part(self, key: str, part: type | None) -> Any:
        """The target's one instance of a part, built on first use (reload() drops it with the rest)."""
        if key not in self.__dict__:
            self.__dict__[key] = part(self)  # type: ignore[misc]
        return self.__dict__[key]

    # ---- health (the Health part, harness/target/health.py) ---------------------------------------

    @property
    def health(self) -> Health:
        """What is unhealthy, each component's own check, the leases' holders, and the load balancer's view."""
        return self._part("_health", self.HEALTH)

    def sweep(self, keep: frozenset[str] = frozenset()) -> list[str]:
        """Undo what faults may have left without a journal entry, in what only this backend knows (held or
        overridden components, stopped processes), except the components in `keep` ('<component>@<host>': a
        heal found forcing them back unsafe); network rules and shaping are swept by the caller."""
        return []
