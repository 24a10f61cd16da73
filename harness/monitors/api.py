"""API availability: GET /readyz through the load balancer (and optionally each apiserver directly), or a real
read (probe="get": GET of the default namespace, a linearizable read that goes through etcd).

/readyz is ClusterLoader2's availability probe. A real read is what a client sees: the two differ while an
apiserver shuts down gracefully, when /readyz fails on purpose (so load balancers stop sending it traffic) while
it still serves requests, and while a restarted one runs its post-start hooks, when it serves reads but is not
ready yet.

By default each worker keeps one persistent HTTPS connection, like the cluster's long-lived clients
(controllers, kubelets): when the backend it is pinned to dies, the request in flight fails and the
next one reconnects through the load balancer. Workers below `fresh` open a new connection for every
request instead, like short-lived clients (kubectl, CI jobs): only they exercise how the load balancer
routes new connections, i.e. its health checks.
"""

from __future__ import annotations

import requests

from harness.target.protocol import Target
from harness.history import History, Outcome, now
from harness.thresholds import AVAILABILITY_PROBE_TIMEOUT_S
from harness.monitors.base import Monitor


def failed_checks(body: str) -> str:
    """The checks a failing /readyz names ("[-]shutdown failed: ..."), so a History says why it failed."""
    names = [line[3:].split()[0] for line in body.splitlines() if line.startswith("[-]") and len(line) > 3]
    return f" ({', '.join(names[:4])})" if names else ""


PROBES = {"readyz": "/readyz", "get": "/api/v1/namespaces/default"}  # probe -> path; recorded as api.<probe>


class ApiProber(Monitor):
    name = "api"

    def __init__(self, cluster: Target, history: History, *, rate: float = 20.0,
                 timeout: float = AVAILABILITY_PROBE_TIMEOUT_S, direct: bool = False, workers: int = 4, fresh: int = 0,
                 probe: str = "readyz", **limits) -> None:
        super().__init__(cluster, history, rate=rate, workers=workers, **limits)
        if probe not in PROBES:
            raise ValueError(f"unknown probe {probe!r}; probes: {', '.join(PROBES)}")
        self.timeout = timeout
        self.fresh = fresh
        self.path, self.op = PROBES[probe], f"api.{probe}"
        self.targets = {"lb": cluster.api_endpoint}
        if direct:
            for host in cluster.component_hosts("kube-apiserver"):
                self.targets[host] = cluster.apiserver(host).endpoint
        self._sessions = [self._session() for _ in range(workers)]

    def _session(self) -> requests.Session:
        return self.cluster.api.on_a_new_connection().session  # the admin's credentials, a pool of its own

    def step(self, worker: int) -> None:
        if worker < self.fresh:
            self._sessions[worker].close()
            self._sessions[worker] = self._session()
        for target, base in self.targets.items():
            invoke = now()
            try:
                response = self._sessions[worker].get(f"{base}{self.path}", timeout=self.timeout)
                outcome = Outcome.OK if response.status_code == 200 else Outcome.FAIL
                error = "" if outcome is Outcome.OK else f"HTTP {response.status_code}{failed_checks(response.text)}"
            except requests.Timeout as exc:
                outcome, error = Outcome.FAIL, f"timeout: {type(exc).__name__}"
            except requests.RequestException as exc:
                outcome, error = Outcome.FAIL, type(exc).__name__
                self._sessions[worker] = self._session()  # a broken pooled connection is not reused
            self.history.record(f"api-{worker}", self.op, target, invoke, outcome, error=error,
                                fresh=worker < self.fresh)
