#!/usr/bin/env python3
"""A stand-in for the Envoy image kind runs as its control-plane load balancer, built on HAProxy.

kind (v0.33) starts `docker.io/envoyproxy/envoy:v1.36.2` with `envoy -c /home/envoy/envoy.yaml` in a retry
loop and configures it by replacing /home/envoy/lds.yaml (the listener) and /home/envoy/cds.yaml (the
apiservers) with rendered templates (sigs.k8s.io/kind pkg/cluster/internal/loadbalancer). That image cannot
be pulled here, so Quorum builds one whose `envoy` is this script: it reads those two files, renders the same
balancing as HAProxy (TCP round robin, GET on the check's path over TLS without verification every 2 s, down after
2 failures, up after 1, like kind's Envoy cluster; like Envoy, no checks when cds.yaml has no health_checks), runs
HAProxy and reloads it whenever a file changes. The Envoy fields Quorum's kind topology sets
(harness/backends/kind/load_balancer.py) become their HAProxy equivalents: the check's path, a cluster's
close_connections_on_host_health_failure (on-marked-down shutdown-sessions) and the TCP proxy's
max_connect_attempts (retries on the next server; Envoy's default, one attempt, is `retries 0`).

Runs inside the container with Debian's python3: standard library only.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HAPROXY = "/usr/sbin/haproxy"
POLL_S = 0.5

# kind's Envoy health check (ProxyCDSConfigTemplate): interval 2 s, timeout 3 s, unhealthy 2, healthy 1
CHECK = "inter 2s fall 2 rise 1"
_ENDPOINT = re.compile(r"socket_address:\s*\n\s*address:\s*\"?([^\s\"]+)\"?\s*\n\s*port_value:\s*(\d+)")
_CHECK_PATH = re.compile(r"http_health_check:\s*\n\s*path:\s*[\"']?(/[A-Za-z0-9._~/-]*)[\"']?\s*$", re.MULTILINE)
_CLOSE_ON_FAILURE = re.compile(r"^\s*close_connections_on_host_health_failure:\s*true\s*$", re.MULTILINE)
_CONNECT_ATTEMPTS = re.compile(r"^\s*max_connect_attempts:\s*(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int


def endpoints(text: str) -> list[Endpoint]:
    """Every socket_address (address, port_value) in a rendered xDS file, in order."""
    return [Endpoint(host, int(port)) for host, port in _ENDPOINT.findall(text)]


def render(lds: str, cds: str) -> str | None:
    """HAProxy's configuration for kind's listener and apiservers; None while kind has not written a listener."""
    listeners = endpoints(lds)
    if not listeners:
        return None
    listen = listeners[0]
    bind = f"[{listen.host}]" if ":" in listen.host else listen.host
    path = _CHECK_PATH.search(cds)
    attempts = _CONNECT_ATTEMPTS.search(lds)
    retries = max(0, int(attempts.group(1)) - 1) if attempts else 0
    lines = [
        "global",
        "  log stdout format short local0 info",
        "  stats socket /home/envoy/haproxy.sock mode 600 level user",
        "defaults",
        "  mode tcp",
        "  log global",
        "  option tcplog",
        "  timeout connect 250ms",  # kind's connect_timeout: 0.25s
        f"  retries {retries}",
        *(["  option redispatch 1"] if retries else []),  # each attempt on the next server, as Envoy's are
        "  timeout client 600s",
        "  timeout server 600s",
        "  timeout check 3s",
        "frontend listener_apiserver",
        f"  bind {bind}:{listen.port}",
        "  default_backend kube_apiservers",
        "backend kube_apiservers",
        "  balance roundrobin",
    ]
    checked = "health_checks:" in cds  # like Envoy, a cluster without health_checks sends to every endpoint blindly
    if checked:
        lines += ["  option httpchk", f"  http-check send meth GET uri {path.group(1) if path else '/'}",
                  "  http-check expect status 200"]
    closing = " on-marked-down shutdown-sessions" if _CLOSE_ON_FAILURE.search(cds) else ""
    # node names resolve through Docker's DNS; a node not resolvable yet starts disabled, not fatal
    checks = f"{CHECK} check check-ssl verify none{closing} " if checked else ""
    lines.append(f"  default-server {checks}init-addr libc,none")
    for n, backend in enumerate(endpoints(cds)):
        lines.append(f"  server apiserver{n} {backend.host}:{backend.port}")
    return "\n".join(lines) + "\n"


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


class Balancer:
    """HAProxy in master-worker mode, reloaded (SIGUSR2) with each new configuration."""

    def __init__(self, config_path: Path) -> None:
        self.config_path = config_path
        self.process: subprocess.Popen | None = None

    def apply(self, config: str) -> None:
        tmp = self.config_path.with_suffix(".tmp")
        tmp.write_text(config)
        check = subprocess.run([HAPROXY, "-c", "-q", "-f", str(tmp)], capture_output=True, text=True)
        if check.returncode != 0:  # keep serving the last good configuration
            print(f"envoy stand-in: refusing a configuration HAProxy rejects:\n{check.stdout}{check.stderr}",
                  file=sys.stderr, flush=True)
            return
        os.replace(tmp, self.config_path)
        if self.process is None:
            self.process = subprocess.Popen([HAPROXY, "-W", "-db", "-f", str(self.config_path)])
        else:
            self.process.send_signal(signal.SIGUSR2)

    def exited(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


def main(argv: list[str]) -> int:
    # kind runs `envoy -c /home/envoy/envoy.yaml`; lds.yaml and cds.yaml sit next to it
    bootstrap = Path(argv[argv.index("-c") + 1]) if "-c" in argv else Path("/home/envoy/envoy.yaml")
    directory = bootstrap.parent
    balancer = Balancer(directory / "haproxy.cfg")
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: (balancer.stop(), sys.exit(0)))
    applied: str | None = None
    while True:
        config = render(_read(directory / "lds.yaml"), _read(directory / "cds.yaml"))
        if config is not None and config != applied:
            balancer.apply(config)
            applied = config
        code = balancer.exited()
        if code is not None:
            return code or 1  # kind's loop restarts us after a second
        time.sleep(POLL_S)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
