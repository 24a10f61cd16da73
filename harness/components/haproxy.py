"""HAProxy in TCP mode in front of the apiservers, health-checking /readyz over verified TLS."""

from __future__ import annotations

from pathlib import Path

from harness.components.base import ComponentSpec, HealthProbe, Layout
from harness.clients.haproxy_admin import check_socket_path
from harness.topology import Component, Host


def ms(seconds: float) -> str:
    return f"{int(seconds * 1000)}ms"


def config(layout: Layout, host: Host) -> str:
    topology = layout.topology
    lb, check = topology.load_balancer, topology.load_balancer.health_check
    lines = [
        "global",
        "  maxconn 4096",
        "  log stderr format short local0 info",
        # admin socket (root only): scenarios time the LB's detection from it (harness/clients/haproxy_admin.py), and
        # a scale-up or scale-down takes a server in or out of rotation through it, without restarting HAProxy
        f"  stats socket {admin_socket(layout, host)} mode 600 level admin",
        "defaults",
        "  mode tcp",
        "  log global",
        "  option tcplog",
        # a connection refused by a dead backend is retried on another one; a blind twin's balancer retries none, as
        # a plain TCP balancer does (not HAProxy's default, 3 retries on the same server: docs/scenarios.md)
        *(["  retries 3", "  option redispatch 1"] if lb.redispatch else ["  retries 0"]),
        "  timeout connect 2s",
        "  timeout client 600s",   # long enough for watches
        "  timeout server 600s",
        f"  timeout check {ms(check.timeout_s)}",
        "frontend apiserver",
        f"  bind {layout.address(host)}:{lb.port}",
        "  default_backend apiservers",
        "backend apiservers",
        "  balance roundrobin",
    ]
    if check.enabled:
        lines += [
            "  option httpchk",
            f"  http-check send meth GET uri {check.path}",
            "  http-check expect status 200",
            f"  default-server inter {ms(check.interval_s)} fall {check.fall} rise {check.rise} "
            f"check check-ssl verify required ca-file {layout.pki.ca.cert}"
            # mode tcp keeps established connections on a backend marked down: a client with a kept-alive
            # connection to an apiserver cut off from etcd would time out until it reconnects by itself
            # (measured in the load suite's partition scenario). Closing them makes clients reconnect elsewhere.
            + (" on-marked-down shutdown-sessions" if check.shutdown_sessions else ""),
        ]
    # a spare host's server is listed from the start, in maintenance: joining it is `enable server` on the admin socket
    for controller in (h for h in topology.hosts if h in topology.controllers or h in topology.spares):
        lines.append(f"  server {controller.name} {layout.address(controller)}:{topology.apiserver.port}"
                     + (" disabled" if controller in topology.spares or controller.retiring else ""))
    return "\n".join(lines) + "\n"


def config_path(layout: Layout, host: Host) -> Path:
    return layout.config_dir(host.name) / "haproxy.cfg"


def admin_socket(layout: Layout, host: Host) -> Path:
    # directly in the run directory, not in config/<host>/: HAProxy takes at most 97 bytes, and a pytest
    # tmp_path run directory is already ~80 (CI failed once at 98 when pytest's counter reached 101)
    return check_socket_path(layout.run_dir / f"{host.name}.sock")


def spec(layout: Layout, host: Host) -> ComponentSpec:
    path = config_path(layout, host)
    argv = [str(layout.binary("haproxy")), "-db", "-f", str(path)]
    health = HealthProbe("tcp", layout.address(host), layout.topology.load_balancer.port)
    return ComponentSpec(Component.HAPROXY, host.name, argv, layout.topology.restart_policy(Component.HAPROXY), health,
                         files={path: config(layout, host)})
