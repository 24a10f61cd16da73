"""Where a load balancer sends new connections, seen from outside (harness/monitors/lb_routes.py) and judged
(lb_routed_around, harness/checkers/lb.py): real TLS servers on loopback, each with its own certificate, behind a
small round-robin TCP proxy that can take one of them out of rotation, as a load balancer's checks would."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
import time
from contextlib import ExitStack

import pytest

from harness.checkers.lb import CONFIRM_PROBES, ROUTE, lb_routed_around
from harness.checkers.verdict import Status
from harness.errors import ClusterError
from harness.history import History, Outcome
from harness.monitors.lb_routes import LbRouteProber
from harness.pki import Authority

LOOPBACK = ipaddress.IPv4Address("127.0.0.1")


class Listener:
    """A TCP listener on loopback whose accept loop hands each connection to `accepted`, until close()."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def accepted(self, connection: socket.socket) -> None:
        raise NotImplementedError

    def _serve(self) -> None:
        self.listener.settimeout(0.2)
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted(connection)

    def close(self) -> None:
        self.stopped.set()
        self.listener.close()


class TlsServer(Listener):
    """Completes TLS handshakes with its own certificate and closes; `hung` accepts and never answers."""

    def __init__(self, pair) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(str(pair.cert), str(pair.key))
        self.hung = False
        super().__init__()

    def accepted(self, connection: socket.socket) -> None:
        threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            if self.hung:
                self.stopped.wait(5.0)
                return
            try:
                with self.context.wrap_socket(connection, server_side=True) as tls:
                    tls.settimeout(2.0)
                    tls.recv(1)  # until the client closes
            except (OSError, ssl.SSLError):
                pass


class RoundRobin(Listener):
    """A TCP load balancer in miniature: each new connection to the next server still in rotation, piped both ways."""

    def __init__(self, ports: dict[str, int]) -> None:
        self.ports, self.rotation = ports, list(ports)
        self.turn = 0
        super().__init__()

    def accepted(self, client: socket.socket) -> None:
        server = self.rotation[self.turn % len(self.rotation)]
        self.turn += 1
        try:
            upstream = socket.create_connection(("127.0.0.1", self.ports[server]), timeout=2.0)
        except OSError:
            client.close()
            return
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class Api:
    def __init__(self, endpoint: str, ca: str) -> None:
        self.endpoint = endpoint
        self.session = type("Session", (), {"verify": ca})()


class Apiservers:
    """As much of a target as the prober uses: the API through the balancer, each apiserver directly."""

    def __init__(self, lb_port: int, ports: dict[str, int], ca: str) -> None:
        self.api = Api(f"https://127.0.0.1:{lb_port}", ca)
        self.api_endpoint = self.api.endpoint
        self.direct = {host: Api(f"https://127.0.0.1:{port}", ca) for host, port in ports.items()}

    def ensure_local(self) -> None:
        pass

    def component_hosts(self, component: str) -> list[str]:
        return list(self.direct)

    def apiserver(self, host: str) -> Api:
        return self.direct[host]


@pytest.fixture
def balanced(tmp_path):
    """Three apiservers with their own certificates behind a round-robin balancer."""
    ca = Authority(tmp_path, "test-ca")
    with ExitStack() as stack:
        servers = {host: TlsServer(ca.issue(f"apiserver-{host}", "kube-apiserver", server=True, ips=(LOOPBACK,)))
                   for host in ("c1", "c2", "c3")}
        for server in servers.values():
            stack.callback(server.close)
        balancer = RoundRobin({host: server.port for host, server in servers.items()})
        stack.callback(balancer.close)
        yield Apiservers(balancer.port, {host: s.port for host, s in servers.items()}, str(ca.pair.cert)), balancer, servers


def probed(target, history: History, seconds: float) -> None:
    prober = LbRouteProber(target, history, rate=40.0, workers=4, max_s=seconds + 5.0).start()
    time.sleep(seconds)
    prober.stop()


def test_each_new_connection_is_attributed_to_the_apiserver_that_took_it(balanced):
    target, _, _ = balanced
    history = History()
    probed(target, history, 1.0)
    routes = history.ops_of(ROUTE)
    assert len(routes) >= 20 and all(op.ok for op in routes), [op.error for op in routes if not op.ok][:3]
    assert {op.value for op in routes} == {"c1", "c2", "c3"}


def test_an_apiserver_taken_out_of_rotation_is_seen_routed_around_and_one_left_in_is_not(balanced):
    target, balancer, servers = balanced
    history = History()
    prober = LbRouteProber(target, history, rate=30.0, workers=12, max_s=15.0).start()
    time.sleep(0.5)
    history.event("fault.start", id="f1", name="modify-flags")
    servers["c1"].hung = True  # its handshakes hang: failures, until the balancer stops sending it connections
    time.sleep(0.7)
    balancer.rotation = ["c2", "c3"]
    time.sleep(2.0)
    history.event("fault.end", id="f1")
    prober.stop()
    verdict = lb_routed_around(history, server="c1", max_s=5.0)
    assert verdict.status is Status.PASS, verdict.explanation
    # the switch came 0.7 s after the fault's start and the fault lasted 2.7 s: timed at the switch, not at the end
    assert 0.0 < verdict.figures["routed_around_s"] < 2.0 and verdict.figures["failed"] > 0
    assert verdict.figures["clean_after"] >= CONFIRM_PROBES

    still = lb_routed_around(history, server="c2", max_s=5.0)  # c2 was never out of rotation
    assert still.status is Status.FAIL and "still reached c2" in still.explanation


def test_a_balancer_that_shows_its_own_certificate_is_refused_by_name(tmp_path):
    ca = Authority(tmp_path, "test-ca")
    own = TlsServer(ca.issue("balancer", "a balancer terminating TLS", server=True, ips=(LOOPBACK,)))
    apiserver = TlsServer(ca.issue("apiserver-c1", "kube-apiserver", server=True, ips=(LOOPBACK,)))
    try:
        target = Apiservers(own.port, {"c1": apiserver.port}, str(ca.pair.cert))
        with pytest.raises(ClusterError) as refused:
            LbRouteProber(target, History()).setup()
        assert "terminates TLS itself" in refused.value.problem
    finally:
        own.close()
        apiserver.close()


def history_of(routes: list[tuple[float, str | None]], *, fault: tuple[float, float]) -> History:
    """Probes at the given times, each reaching an apiserver (its name) or failing (None), around one fault."""
    history = History()
    history.event("fault.start", t=fault[0], id="f", name="kill")
    history.event("fault.end", t=fault[1], id="f")
    for at, server in routes:
        history.record("p", ROUTE, "lb", at, Outcome.OK if server else Outcome.FAIL, value=server,
                       error="" if server else "ConnectionResetError", complete=at + 0.01)
    return history


def rotation(start: float, stop: float, servers: list[str], step: float = 0.1) -> list[tuple[float, str]]:
    count = int(round((stop - start) / step))
    return [(round(start + i * step, 3), servers[i % len(servers)]) for i in range(count)]


def test_the_routing_verdict_times_the_last_connection_that_reached_or_failed_and_needs_it_seen_before():
    before = rotation(0.0, 5.0, ["c1", "c2", "c3"])
    failing = [(5.0 + 0.1 * i, None if i % 3 == 0 else "c2") for i in range(30)]  # c1's share fails for 3 s
    after = rotation(8.0, 12.0, ["c2", "c3"])
    verdict = lb_routed_around(history_of(before + failing + after, fault=(5.0, 12.0)), server="c1", max_s=5.0)
    assert verdict.passed and verdict.figures["routed_around_s"] == pytest.approx(2.7, abs=0.01)
    assert not lb_routed_around(history_of(before + failing + after, fault=(5.0, 12.0)), server="c1", max_s=2.0)
    never_seen = lb_routed_around(history_of(rotation(0.0, 5.0, ["c2"]) + after, fault=(5.0, 12.0)), server="c1",
                                  max_s=5.0)
    assert never_seen.status is Status.UNKNOWN and "not seen in rotation" in never_seen.explanation
    unprobed = lb_routed_around(history_of(before, fault=(5.0, 12.0)), server="c1", max_s=5.0)
    assert unprobed.status is Status.UNKNOWN  # nothing probed during the fault: cannot judge, never a pass


def test_a_fault_waits_until_its_apiserver_is_seen_in_rotation_and_says_where_connections_went_when_it_never_is():
    from harness.scenario.helpers import wait_seen_in_rotation

    seen = history_of(rotation(0.0, 1.0, ["c1", "c2"]), fault=(5.0, 6.0))
    wait_seen_in_rotation(seen, "c1", 1.0)
    with pytest.raises(ClusterError) as never:
        wait_seen_in_rotation(seen, "c3", 0.3)
    assert "reached c3" in never.value.problem and "they reached: c1, c2" in never.value.problem


def test_the_moment_clients_stopped_reaching_an_apiserver_is_waited_for_from_outside_and_none_when_never_seen():
    """A target without the balancer's admin socket times the balancer by this (harness/scenario/helpers.py)."""
    from harness.scenario.helpers import wait_routed_around

    before = rotation(0.0, 5.0, ["c1", "c2", "c3"])
    failing = [(5.0 + 0.1 * i, None if i % 3 == 0 else "c2") for i in range(30)]
    after = rotation(8.0, 12.0, ["c2", "c3"])
    routed = history_of(before + failing + after, fault=(5.0, 12.0))
    assert wait_routed_around(routed, "c1", 1.0) == pytest.approx(7.7, abs=0.01)  # the fault's start + 2.7 s
    still = history_of(before + rotation(5.0, 12.0, ["c1", "c2", "c3"]), fault=(5.0, 12.0))
    assert wait_routed_around(still, "c1", 0.3) is None  # still in rotation: not taken out within the time


def test_the_balancer_takes_an_apiserver_back_after_its_rise_checks_or_at_once_when_it_checks_nothing():
    from harness.objectives.policy import Objectives
    from harness.scenario.helpers import lb_takes_back_s
    from harness.target.protocol import Unsupported
    from harness.topology import HealthCheck

    class Stated:
        def __init__(self, check):
            self.check = check

        def load_balancer_check(self):
            if self.check == "unstated":
                raise Unsupported("the inventory does not say how the load balancer checks the apiservers", "")
            return self.check

    defaults, policy = Objectives(), Objectives(lb_detection_s=7.0)
    assert lb_takes_back_s(Stated(HealthCheck(interval_s=2.0, rise=2)), policy) == 4.0
    assert lb_takes_back_s(Stated(None), policy) == 0.0
    assert lb_takes_back_s(Stated("unstated"), defaults) == defaults.for_measure("lb_detection_s")
    assert lb_takes_back_s(Stated("unstated"), policy) == 7.0  # the session's policy, not the defaults


def test_every_client_is_routed_around_when_the_balancer_marks_down_or_seen_from_outside_a_detection_time_later():
    """Outside, a balancer that retries refused connections elsewhere sends new ones around a stopping apiserver at
    once, while the connections it holds stay with it until its checks mark it down."""
    from harness.scenario.helpers import every_client_routed_around_from
    from harness.target.capabilities import Capability

    class Seen:
        def __init__(self, *capabilities):
            self.held = frozenset(capabilities)

        def capabilities(self):
            return self.held

    assert every_client_routed_around_from(Seen(Capability.LB_ADMIN), 10.0, 12.0) == 10.0
    assert every_client_routed_around_from(Seen(), 10.0, 12.0) == 22.0
    assert every_client_routed_around_from(Seen(), None, 12.0) is None
