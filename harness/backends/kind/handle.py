"""A running kind cluster, as the harness sees it: its node containers, its API through kind's load balancer
(with the admin credentials kind wrote), and what is unhealthy right now.

It offers the part of harness.backends.process.target.Cluster that the History, the Nemesis and the API monitors use, so the
same fixtures observe a kind cluster; the control plane here is kubeadm's static pods, not Quorum's supervisor.
"""

from __future__ import annotations

import base64
import os
import secrets
import tempfile
from functools import cached_property
from pathlib import Path
from urllib.parse import urlparse

import requests
import yaml
from python_on_whales.exceptions import DockerException

from harness.net.netns import assert_local
from harness.backends.docker.engine import client
from harness.errors import ClusterError
from harness.clients.etcdapi import EtcdClient, EtcdCredentials
from harness.backends.kind.cluster import KIND_LABEL, cluster_name
from harness.backends.kind.topology import KindTopology, load_kind_topology
from harness.components.flags import parse_flags
from harness.clients.kubeapi import ApiClient
from harness.pki import Pair
from harness.target.handle import RunHandle
from harness.run.state import RunState
from harness.topology import Component

ROLE_LABEL = "io.x-k8s.kind.role"
STATIC_PODS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
LEASES = ("kube-controller-manager", "kube-scheduler")
MANIFESTS = "/etc/kubernetes/manifests"
COMM_LENGTH = 15  # TASK_COMM_LEN - 1: how much of a process name pgrep/pkill can match (proc(5))
APISERVER_PORT = 6443  # kubeadm's default bind port in every control-plane node
# kubeadm binds the controller-manager's and the scheduler's secure ports to 127.0.0.1: asked from inside the node
LOCAL_HEALTH_PORTS = {"kube-controller-manager": 10257, "kube-scheduler": 10259}
ETCD_CLIENT_PORT = 2379  # kubeadm's stacked etcd listens for clients on the node's address and on loopback
# kubeadm's etcd CA, and the client pair it gives kube-apiserver (etcd has no auth: any client of its CA may write)
ETCD_CREDENTIALS = {"etcd-ca.crt": "/etc/kubernetes/pki/etcd/ca.crt",
                    "etcd-client.crt": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
                    "etcd-client.key": "/etc/kubernetes/pki/apiserver-etcd-client.key"}
MARKER_PATH, MARKER = "/api/v1/namespaces/default/configmaps", "quorum-marker"


def _ready(conditions: list[dict] | None) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions or [])


def not_ready_reason(node: dict | None) -> str | None:
    """Why a Node object is not Ready, in the kubelet's words (its Ready condition's reason and message);
    None when it is Ready."""
    if node is None:
        return "not registered"
    conditions = node.get("status", {}).get("conditions") or []
    if _ready(conditions):
        return None
    ready = next((c for c in conditions if c.get("type") == "Ready"), None)
    if ready is None:
        return "no Ready condition yet"
    return f"{ready.get('reason') or 'NotReady'}: {ready.get('message') or 'no message'}"[:300]


class KindCluster(RunHandle):
    poll_interval_s = 2.0

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir).resolve()
        self.state = RunState.load(self.run_dir)
        if self.state.backend != "kind":
            raise ClusterError(f"{self.run_dir} holds a {self.state.backend} cluster, not a kind one",
                               "run the kind scenarios with --backend kind")
        self.topology: KindTopology = load_kind_topology(self.run_dir / "topology.yaml")
        self.specs: dict = {}  # no supervisor-run components: the kubelet runs the control plane

    def reload(self) -> "KindCluster":
        self.__init__(self.run_dir)  # type: ignore[misc]
        for cached in ("api", "etcd", "etcd_urls", "etcd_credentials"):
            self.__dict__.pop(cached, None)
        return self

    @property
    def kind_name(self) -> str:
        return cluster_name(self.run_id)

    @property
    def kubeconfig(self) -> Path:
        return self.run_dir / "kubeconfig"

    @property
    def admin_kubeconfig(self) -> Path:
        return self.kubeconfig

    @property
    def events_path(self) -> Path:
        return self.run_dir / "events.jsonl"  # never written: nothing here is run by Quorum's supervisor

    def log_path(self, component_id: str) -> Path:
        return self.run_dir / "logs" / f"{component_id}.log"

    # ---- nodes ---------------------------------------------------------------------------------

    def node(self, short: str) -> str:
        """A node's container (and Kubernetes node) name from its short name: control-plane, control-plane2,
        worker, ... (kind's own naming)."""
        return f"{self.kind_name}-{short}"

    def nodes(self, role: str | None = None) -> list[str]:
        """Short names of the cluster's node containers (role: control-plane or worker), sorted."""
        found = []
        for container in client().container.list(all=True, filters=[("label", f"{KIND_LABEL}={self.kind_name}")]):
            node_role, name = container.config.labels.get(ROLE_LABEL, ""), container.name
            if node_role in ("control-plane", "worker") and (role is None or node_role == role):
                found.append(name.removeprefix(f"{self.kind_name}-"))
        return sorted(found)

    def address(self, node: str) -> str | None:
        """The node's address on the run's network (None while the container is stopped)."""
        networks = client().container.inspect(self.node(node)).network_settings.networks or {}
        endpoint = networks.get(self.state.docker_network or "")
        return (endpoint.ip_address or None) if endpoint else None

    def exec(self, node: str, argv: list[str], *, check: bool = True) -> str:
        """Run a command inside a node container (short name); its standard output."""
        try:
            return client().container.execute(self.node(node), argv) or ""
        except DockerException as error:
            if not check:
                return ""
            raise ClusterError(f"{' '.join(argv[:3])} in node {node} failed: {str(error)[-500:]}",
                               "docker ps -a shows the cluster's nodes; quorum down removes them") from None

    def live_flags(self, component: Component) -> dict[str, dict[str, str]]:
        """Control-plane node -> the flags of that static pod's process there, from its live command line (the
        node's pid namespace holds every container's processes)."""
        flags = {}
        for node in self.nodes("control-plane"):
            script = f"pid=$(pgrep -o -x {component.value[:COMM_LENGTH]}) && tr '\\0' '\\n' < /proc/$pid/cmdline"
            argv = self.exec(node, ["sh", "-c", script], check=False).splitlines()
            if not argv:
                raise ClusterError(f"{component.value} is not running in kind node {node}",
                                   f"quorum status {self.run_dir} shows the nodes and their static pods")
            flags[node] = parse_flags(argv[1:])
        return flags

    def static_pod_pid(self, node: str, component: str) -> int | None:
        """The pid (in the node's pid namespace, which holds every container's processes) of the oldest process
        named like `component`'s static pod in `node`, or None when none runs."""
        found = self.exec(node, ["pgrep", "-o", "-x", component[:COMM_LENGTH]], check=False).strip()
        return int(found) if found.isdigit() else None

    @property
    def apiserver_hosts(self) -> list[str]:
        return self.nodes("control-plane")

    def apiserver(self, node: str) -> ApiClient:
        """One apiserver directly, bypassing kind's load balancer, as kind's admin."""
        address = self.address(node)
        if address is None:
            raise ClusterError(f"kind node {node} has no address: its container is not running",
                               "quorum status shows the nodes; quorum heal brings stopped ones back")
        other = self.api.on_a_new_connection()
        other.endpoint = f"https://{address}:{APISERVER_PORT}"
        return other

    def replace_file(self, container: str, path: str, text: str) -> None:
        """Replace a file in one of the cluster's containers atomically: the text goes to a hidden file beside
        it, then a rename replaces it. Watchers (the kubelet, the load balancer) never read half a file."""
        directory, name = path.rsplit("/", 1)
        hidden = f"{directory}/.{name}.quorum"
        with tempfile.TemporaryDirectory(prefix="quorum-replace-") as local_directory:
            local = Path(local_directory) / name
            local.write_text(text)
            client().container.copy(local, (container, hidden))
        client().container.execute(container, ["mv", "-f", hidden, path])

    def replace_manifest(self, node: str, name: str, text: str) -> None:
        """Replace MANIFESTS/<name> in a node (the kubelet ignores the hidden file: its name starts with a dot)."""
        self.replace_file(self.node(node), f"{MANIFESTS}/{name}", text)

    def static_pod_log(self, node: str, component: str, lines: int = 80) -> str:
        """The tail of a static pod's newest container log, as the kubelet keeps it in the node."""
        script = (f"ls -t /var/log/pods/kube-system_{component}-{self.node(node)}_*/{component}/*.log 2>/dev/null"
                  f" | head -n 1 | xargs -r tail -n {lines}")
        return self.exec(node, ["sh", "-c", script], check=False)

    # ---- API -----------------------------------------------------------------------------------

    @cached_property
    def api(self) -> ApiClient:
        """The API through kind's load balancer as kind's admin (credentials from its kubeconfig, 0600)."""
        config = yaml.safe_load(self.kubeconfig.read_text())
        cluster = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        directory = self.run_dir / "pki"
        directory.mkdir(mode=0o700, exist_ok=True)
        paths = {"ca.crt": cluster["certificate-authority-data"], "admin.crt": user["client-certificate-data"],
                 "admin.key": user["client-key-data"]}
        for name, data in paths.items():
            path = directory / name
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(base64.b64decode(data))
        return ApiClient(cluster["server"], str(directory / "ca.crt"), Pair(directory / "admin.crt", directory / "admin.key"))

    @property
    def api_endpoint(self) -> str:
        return self.api.endpoint

    # ---- etcd (kubeadm's stacked members, one per control-plane node) ------------------------------

    @property
    def etcd_host_names(self) -> list[str]:
        return self.nodes("control-plane")

    def etcd_url(self, node: str) -> str:
        address = self.address(node)
        if address is None:
            raise ClusterError(f"kind node {node} has no address: its container is not running",
                               "quorum status shows the nodes; quorum heal brings stopped ones back")
        return f"https://{address}:{ETCD_CLIENT_PORT}"

    @cached_property
    def etcd_urls(self) -> list[str]:
        """Cached: monitors ask on every poll, and a node keeps its address (KindNodesRestart sees to that)."""
        return [self.etcd_url(node) for node in self.etcd_host_names]

    @cached_property
    def etcd_credentials(self) -> EtcdCredentials:
        """kubeadm's etcd CA and kube-apiserver's etcd client pair, copied from the first control-plane node
        into run_dir/pki (0600, like the admin credentials)."""
        directory = self.run_dir / "pki"
        directory.mkdir(mode=0o700, exist_ok=True)
        node = self.etcd_host_names[0]
        for name, source in ETCD_CREDENTIALS.items():
            text = self.exec(node, ["cat", source])
            if "-----BEGIN" not in text:
                raise ClusterError(f"{source} in kind node {node} holds no PEM data",
                                   "the node is not one kubeadm set up; quorum down and up again")
            descriptor = os.open(directory / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w") as handle:
                handle.write(text)
        return EtcdCredentials(directory / "etcd-ca.crt", Pair(directory / "etcd-client.crt", directory / "etcd-client.key"))

    @cached_property
    def etcd(self) -> EtcdClient:
        """kubeadm names each member after its node; the harness knows nodes by their short names."""
        credentials, prefix = self.etcd_credentials, f"{self.kind_name}-"
        return EtcdClient(self.etcd_urls, str(credentials.ca), credentials.client, host_of=lambda name: name.removeprefix(prefix))

    def ensure_local(self) -> None:
        """The API endpoint is on loopback (kind publishes its load balancer there) or in this run's network."""
        host = urlparse(self.api_endpoint).hostname or ""
        if host not in ("127.0.0.1", "localhost", "::1"):
            assert_local(host, self.state.bridge or "")

    def _get(self, path: str) -> dict | None:
        try:
            response = self.api.get(path, timeout=3.0)
        except requests.RequestException:
            return None
        return response.json() if response.status_code == 200 else None

    def apiserver_ready(self, node: str, timeout: float = 1.0) -> bool:
        """kube-apiserver in `node` answers /readyz directly (not through the load balancer)."""
        address = self.address(node)
        if address is None:
            return False
        try:
            return self.api.session.get(f"https://{address}:{APISERVER_PORT}/readyz", timeout=timeout).status_code == 200
        except requests.RequestException:
            return False

    def component_healthy(self, node: str, component: str) -> bool:
        """One control-plane static pod in `node` passes its own health check: the apiserver's /readyz, etcd's
        status, the controller-manager's and the scheduler's /healthz (from inside the node, with its curl)."""
        if component == "kube-apiserver":
            return self.apiserver_ready(node)
        if component == "etcd":
            return self.address(node) is not None and self.etcd.status(self.etcd_url(node), timeout=1.0) is not None
        if component not in LOCAL_HEALTH_PORTS:
            raise KeyError(f"no static pod {component!r}; static pods: {', '.join(STATIC_PODS)}")
        url = f"https://127.0.0.1:{LOCAL_HEALTH_PORTS[component]}/healthz"
        return self.exec(node, ["curl", "-sk", "--max-time", "1", url], check=False).strip() == "ok"

    def static_pod_restarts(self, node: str, component: str) -> int:
        """How often the kubelet has restarted `component`'s container in `node` (its mirror pod's restartCount):
        the kubelet's crash back-off doubles with each of them (reset after 10 min without one)."""
        pod = self._get(f"/api/v1/namespaces/kube-system/pods/{component}-{self.node(node)}")
        if pod is None:
            raise ClusterError(f"no mirror pod for {component} in kind node {node}",
                               f"quorum status {self.run_dir} shows the nodes and their static pods")
        return sum(c.get("restartCount", 0) for c in pod.get("status", {}).get("containerStatuses") or [])

    def write_marker(self, *, refused_ok: bool = False) -> str | None:
        """Write a ConfigMap with a fresh value (read back after a fault: was it kept?); returns the value, or
        None when the write failed and refused_ok (a scenario judging whether writes are accepted). On a new
        connection, so the write goes where the load balancer sends new clients now."""
        value, api = secrets.token_hex(8), self.api.on_a_new_connection()
        try:
            api.request("DELETE", f"{MARKER_PATH}/{MARKER}", timeout=10.0)
            response = api.request("POST", MARKER_PATH, {"apiVersion": "v1", "kind": "ConfigMap",
                                                         "metadata": {"name": MARKER}, "data": {"value": value}})
            problem = None if response.status_code == 201 else f"HTTP {response.status_code} {response.text[:200]}"
        except requests.RequestException as error:
            problem = str(error)[:300]
        if problem is None:
            return value
        if refused_ok:
            return None
        raise ClusterError(f"could not write ConfigMap {MARKER}: {problem}", "quorum status shows what is unhealthy")

    def read_marker(self) -> str | None:
        found = self._get(f"{MARKER_PATH}/{MARKER}")
        return (found or {}).get("data", {}).get("value")

    def lease_holders(self) -> dict[str, str | None]:
        """Lease name -> node holding it, None if unheld."""
        holders = {}
        for name in LEASES:
            holder = self.api.lease_holder(name)
            holders[name] = self.lease_host(holder.identity) if holder else None
        return holders

    def lease_host(self, identity: str) -> str:
        """The short node name ('control-plane2') of a lease holder: kubeadm's identities are
        '<node container>_<uuid>', and node containers are named '<kind cluster>-<short name>'."""
        return identity.split("_", 1)[0].removeprefix(f"{self.kind_name}-")

    def static_pods_ready(self) -> dict[str, bool]:
        """'<component>@<node>' -> whether the kubelet reports that static pod's mirror pod Ready."""
        pods = self._get("/api/v1/namespaces/kube-system/pods") or {"items": []}
        ready = {p["metadata"]["name"]: _ready(p.get("status", {}).get("conditions")) for p in pods["items"]}
        return {f"{component}@{node}": ready.get(f"{component}-{self.node(node)}", False)
                for node in self.nodes("control-plane") for component in STATIC_PODS}

    def problems(self) -> list[str]:
        """What is unhealthy right now: /readyz through the LB or of any apiserver, any node not Ready, any
        control-plane static pod not Ready, an etcd member that does not answer, an unheld leader lease. Empty
        when healthy."""
        if not self.api.ready():
            return ["/readyz via the load balancer"]
        found = []
        nodes = self._get("/api/v1/nodes")
        registered = {n["metadata"]["name"]: n for n in (nodes or {"items": []})["items"]}
        for short in self.nodes():
            # the kubelet's reason goes with it: in one CI run a worker stayed not Ready for 300 s, and why was lost
            if (why := not_ready_reason(registered.get(self.node(short)))) is not None:
                found.append(f"node {short} not Ready ({why})")
        # a mirror pod's status can stay Ready while its node's apiserver is down (seen with a corrupted manifest),
        # so each apiserver is also asked directly
        found += [f"kube-apiserver@{node} not ready (its own /readyz)" for node in self.nodes("control-plane")
                  if not self.apiserver_ready(node)]
        found += [f"static pod {pod} not Ready" for pod, ok in self.static_pods_ready().items() if not ok]
        # an apiserver and its mirror pods can look ready while its node's etcd member is still on its way back
        # (a held member returns 16-42 s after its manifest; StaticPodStop): the next scenario would start on two
        found += [f"etcd member in {node} not answering" for node in self.nodes("control-plane")
                  if self.address(node) and self.etcd.status(self.etcd_url(node), timeout=2.0) is None]
        found += [f"lease {name} unheld" for name, node in self.lease_holders().items() if node is None]
        return found
