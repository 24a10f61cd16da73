"""The fake target's health (harness/target/health.py), read from its model: a component is healthy while it has a
running pid on a powered host, and the cluster is healthy once no component is down, held or overridden, every host
is on and connected with no fault rule and its own link, and every etcd member is back. The load balancer's view is
each apiserver's own health, as a checking balancer would report it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.target.health import Health
from harness.target.protocol import HostRole
from harness.topology import Component

if TYPE_CHECKING:
    from harness.backends.fake.target import FakeTarget


class ModelHealth(Health):
    LB_VIEW = True

    target: "FakeTarget"

    def problems(self) -> list[str]:
        target = self.target
        model = target.model()
        found = [f"{key} unhealthy" for key, entry in model["components"].items()
                 if entry["pid"] is None or entry["state"] != "R" or entry["held"] or entry["override"]]
        found += [f"host {name} {host['power']}" for name, host in model["hosts"].items() if host["power"] != "on"]
        found += [f"host {name} disconnected" for name, host in model["hosts"].items() if not host["connected"]]
        found += [f"{len(host['rules'])} fault rules on {name}" for name, host in model["hosts"].items() if host["rules"]]
        found += [f"link of {name} shaped" for name, host in model["hosts"].items()
                  if host["link"] != target.topology.network.link_rate_mbit]
        found += [f"etcd member {h} removed" for h in target.hosts(HostRole.ETCD) if h not in model["etcd_members"]]
        return found

    def component_healthy(self, component: Component | str, host: str) -> bool:
        target = self.target
        model = target.model()
        entry = target.entry(model, component, host)
        return entry["pid"] is not None and entry["state"] == "R" and target.model_host_on(model, host)

    def lb_server_states(self) -> dict[str, str]:
        return {h: "UP" if self.component_healthy(Component.APISERVER, h) else "DOWN"
                for h in self.target.component_hosts(Component.APISERVER)}
