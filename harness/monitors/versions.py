"""The control plane's releases, observed every few seconds while a change runs: each apiserver's, controller-
manager's and scheduler's running release (Target.running_version: its binary's on the host), and which of them
ran nothing at that moment, recorded as one `versions` event per observation. The checker skew_held (harness/checkers/change.py) judges every observation
against the version skew policy, not only the state the change ends in."""

from __future__ import annotations

from harness.checkers.change import VERSIONS
from harness.errors import QuorumError
from harness.faults.upgrade import CONTROL_PLANE, control_plane_versions
from harness.lifecycle.skew import FOLLOWERS
from harness.monitors.base import Monitor

OBSERVATION_PERIOD_S = 5.0  # a component restarted by a step runs for longer than this before the next one moves


class ReleaseWatcher(Monitor):
    name = "versions"

    def __init__(self, cluster, history, **kwargs) -> None:
        super().__init__(cluster, history, rate=1.0 / OBSERVATION_PERIOD_S, workers=1, **kwargs)

    def step(self, worker: int) -> None:
        self.observe()

    def observe(self) -> None:
        """One observation now (a scenario takes one as a change begins and ends, besides the periodic ones)."""
        try:
            components = {cid: str(version) for cid, version in control_plane_versions(self.cluster).items()}
        except (QuorumError, OSError) as error:  # a host that did not answer: this observation is missing, said
            self.history.event(f"{VERSIONS}.unread", error=str(error)[:300])
            return
        down = sorted(f"{component}@{host}" for component in CONTROL_PLANE
                      for host in self.cluster.component_hosts(component) if f"{component}@{host}" not in components)
        self.history.event(VERSIONS, components=components, down=down, talks_to=self._talks_to(components))

    def _talks_to(self, components: dict[str, str]) -> dict[str, list[str]]:
        """Each running controller-manager and scheduler that uses only some apiservers -> their hosts (kubeadm's
        layout); one that uses every apiserver (a load balancer's endpoint) is left out."""
        reached = {}
        for cid in components:
            component, _, host = cid.partition("@")
            if component in FOLLOWERS:
                hosts = self.cluster.apiservers_reached(component, host)
                if hosts is not None:
                    reached[cid] = hosts
        return reached
