"""kind's load balancer configured as the topology asks: kind renders Envoy's xDS files in the balancer's container
(cds.yaml: the apiservers and their health check; lds.yaml: the listener and its TCP proxy); Quorum then rewrites
the fields its `load_balancer` section names, and the balancer (Envoy, or Quorum's stand-in) reloads them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import yaml

from harness.backends.docker.engine import client
from harness.backends.kind.topology import KindLoadBalancer

if TYPE_CHECKING:
    from harness.backends.kind.target import KindTarget

LB_CDS = "/home/envoy/cds.yaml"  # where kind writes its load balancer's apiservers (and their health check)
LB_LDS = "/home/envoy/lds.yaml"  # where kind writes its listener
TCP_PROXY = "envoy.filters.network.tcp_proxy"


def _resources(text: str) -> tuple[dict, list[dict]]:
    document = yaml.safe_load(text) or {}
    return document, document.get("resources") or []


def configured_cds(cds: str, settings: KindLoadBalancer) -> str:
    """kind's cds.yaml with every health check on settings' path and the close-on-failure choice."""
    document, clusters = _resources(cds)
    for cluster in clusters:
        for check in cluster.get("health_checks") or []:
            check.setdefault("http_health_check", {})["path"] = settings.health_check_path
        cluster["close_connections_on_host_health_failure"] = settings.close_connections_on_failure
    return yaml.safe_dump(document, sort_keys=False)


def configured_lds(lds: str, settings: KindLoadBalancer) -> str:
    """kind's lds.yaml with every TCP proxy making settings' connect attempts."""
    document, listeners = _resources(lds)
    for listener in listeners:
        for chain in listener.get("filter_chains") or []:
            for network_filter in chain.get("filters") or []:
                if network_filter.get("name") == TCP_PROXY:
                    network_filter.setdefault("typed_config", {})["max_connect_attempts"] = settings.connect_attempts
    return yaml.safe_dump(document, sort_keys=False)


def without_health_checks(cds: str) -> str:
    """kind's rendered cds.yaml with every cluster's health_checks removed (a broken twin's balancer)."""
    document, clusters = _resources(cds)
    for cluster in clusters:
        cluster.pop("health_checks", None)
    return yaml.safe_dump(document, sort_keys=False)


def balancer(cluster: "KindTarget") -> str:
    return f"{cluster.kind_name}-external-load-balancer"


def read(cluster: "KindTarget", path: str) -> str:
    return client().container.execute(balancer(cluster), ["cat", path])


def configure(cluster: "KindTarget") -> str:
    """Apply the topology's load_balancer section to the cluster kind created; what was done."""
    settings = cluster.topology.load_balancer
    if cluster.topology.kind.control_planes < 2:  # kind puts a balancer in front of two or more only
        return "load balancer: none (one control-plane node: clients reach its apiserver directly)"
    cluster.replace_file(balancer(cluster), LB_CDS, configured_cds(read(cluster, LB_CDS), settings))
    cluster.replace_file(balancer(cluster), LB_LDS, configured_lds(read(cluster, LB_LDS), settings))
    return (f"load balancer: checks {settings.health_check_path}, "
            f"{'closes' if settings.close_connections_on_failure else 'keeps'} the connections of an apiserver "
            f"marked down, {settings.connect_attempts} connect attempt(s) per client")
