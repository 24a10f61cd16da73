"""Holds and flag overrides on a remote target, through whatever keeps each component running there, as the
inventory says: a static pod's kubelet (harness/components/static_pod.py) or systemd
(harness/components/systemd_keeper.py). A plain process has no keeper Quorum knows, so neither can be done to it.
Everything Quorum moves aside or marks is kept on the host, under FILES, so `quorum heal --target` finds it from any
machine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.components.static_pod import CRASH_LOOP, StaticPods
from harness.components.systemd_keeper import SystemdUnits
from harness.errors import ClusterError
from harness.inventory.model import StaticPod, SystemdUnit
from harness.target.protocol import Unsupported, component_name
from harness.thresholds import STARTUP_ALLOWANCE_S, crash_loop_return_s, held_manifest_return_s
from harness.topology import Component

if TYPE_CHECKING:
    from harness.backends.remote.target import RemoteTarget

FILES = "/var/lib/quorum/"  # on each host: held manifests, their originals, markers, the host journal
NO_KEEPER_FIX = "describe it as a static pod or a systemd unit if a kubelet or systemd runs it (docs/target.md)"
UNITS = SystemdUnits(FILES)


def how(target: "RemoteTarget", component: Component | str) -> StaticPod | SystemdUnit:
    name = Component(component_name(component))
    runs = target.topology.components[name]
    if isinstance(runs, (StaticPod, SystemdUnit)):
        return runs
    raise Unsupported(f"{name.value} runs as {runs.runs_as}: nothing Quorum knows restarts it, so it can neither be "
                      "kept down nor restarted with other flags", NO_KEEPER_FIX)


def pods(runs: StaticPod) -> StaticPods:
    return StaticPods(runs.manifest_dir, FILES)


def keeper(target: "RemoteTarget", component: Component | str) -> tuple[StaticPods | SystemdUnits, str]:
    """What keeps the component running, and the name it knows it by (the pod's, or the unit's)."""
    runs = how(target, component)
    return (UNITS, runs.unit) if isinstance(runs, SystemdUnit) else (pods(runs), component_name(component))


def hold(target: "RemoteTarget", component: Component | str, host: str, signal: str) -> None:
    name, runs = component_name(component), how(target, component)
    if isinstance(runs, SystemdUnit):
        UNITS.hold(target, host, runs.unit, signal)
        return
    earlier = None
    if name in CRASH_LOOP:  # its return waits out the back-off these restarts add to
        try:
            earlier = target.restarts(name, host)
        except ClusterError:
            pass  # unknown: held_return_s allows the back-off's cap
    pods(runs).hold(target, host, name, signal, earlier_restarts=earlier)


def release(target: "RemoteTarget", component: Component | str, host: str) -> None:
    kept_by, name = keeper(target, component)
    kept_by.release(target, host, name)


def held(target: "RemoteTarget", component: Component | str, host: str) -> bool:
    runs = target.topology.components[Component(component_name(component))]
    if isinstance(runs, SystemdUnit):
        return UNITS.is_held(target, host, runs.unit)
    return isinstance(runs, StaticPod) and pods(runs).is_held(target, host, component_name(component))


def held_return_s(target: "RemoteTarget", component: Component | str, host: str) -> float:
    """From release until it answers: a unit starts at once (its start-up allowance); a static pod waits for the
    kubelet as on kind (the manifest's pick-up and one crash back-off step, or the crash loop's back-off)."""
    name, runs = Component(component_name(component)), how(target, component)
    if isinstance(runs, SystemdUnit):
        return STARTUP_ALLOWANCE_S[name]
    if name.value not in CRASH_LOOP:
        return held_manifest_return_s(name)
    earlier, kills = pods(runs).crashes(target, host, name.value)
    return crash_loop_return_s(name, earlier, kills)


def override(target: "RemoteTarget", component: Component | str, host: str, argv: list[str]) -> None:
    kept_by, name = keeper(target, component)
    kept_by.override(target, host, name, argv)


def restore(target: "RemoteTarget", component: Component | str, host: str) -> None:
    kept_by, name = keeper(target, component)
    kept_by.restore(target, host, name)


def command_line(target: "RemoteTarget", component: Component | str, host: str) -> list[str] | None:
    """The configured command line where Quorum can read it without the process (a static pod's manifest); None
    elsewhere: the live command line is the configured one."""
    runs = target.topology.components[Component(component_name(component))]
    return pods(runs).command_line(target, host, component_name(component)) if isinstance(runs, StaticPod) else None


def sweep(target: "RemoteTarget") -> list[str]:
    """Without a journal, on every host: held manifests back, crash loops ended, originals restored, held units
    started, Quorum's drop-ins removed."""
    done = []
    for host in target.hosts():
        here = [c for c in target.topology.components if host in target.component_hosts(c)]
        try:
            for component in here:
                runs = target.topology.components[component]
                if isinstance(runs, StaticPod):
                    done += pods(runs).sweep(target, host, (component.value,))
                elif isinstance(runs, SystemdUnit):
                    done += UNITS.sweep(target, host, [runs.unit])
        except ClusterError as error:  # a host that does not answer: the others are still swept
            done.append(f"could not sweep {host}: {error.problem}")
    return done
