"""kube-apiserver: RBAC + Node authorization, anonymous access only to health endpoints, every etcd member."""

from __future__ import annotations

from harness.components import etcd
from harness.components.base import ComponentSpec, HealthProbe, Layout
from harness.topology import Component, Host

# Structured authentication config: anonymous requests are allowed only on the health endpoints, so
# the load balancer can check /readyz while everything else needs a client certificate.
HEALTH_PATHS = ("/livez", "/readyz", "/healthz")


def authentication_config(health_only: bool, also: tuple[str, ...] = ()) -> str:
    """The apiserver's AuthenticationConfiguration: anonymous requests everywhere, or on the health endpoints (and
    the paths in `also`) only."""
    paths = (*HEALTH_PATHS, *also)
    conditions = "  conditions:\n" + "".join(f"  - path: {p}\n" for p in paths) if health_only else ""
    return ("apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n"
            "anonymous:\n  enabled: true\n" + conditions)


def spec(layout: Layout, host: Host) -> ComponentSpec:
    topology, pki = layout.topology, layout.pki
    serving = pki.apiserver(host.name)
    auth_config = layout.config_dir(host.name) / "authentication.yaml"
    address = layout.address(host)
    argv = [
        str(layout.binary("kube-apiserver")),
        f"--advertise-address={address}",
        f"--bind-address={address}",
        f"--secure-port={topology.apiserver.port}",
        "--etcd-servers=" + ",".join(etcd.apiserver_urls(topology)),
        f"--tls-cert-file={serving.cert}",
        f"--tls-private-key-file={serving.key}",
        f"--client-ca-file={pki.ca.cert}",
        "--authorization-mode=Node,RBAC",
        f"--authentication-config={auth_config}",
        "--enable-admission-plugins=NodeRestriction",
        f"--service-cluster-ip-range={topology.apiserver.service_cidr}",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={pki.service_account_pub}",
        f"--service-account-signing-key-file={pki.service_account_key}",
        f"--cert-dir={layout.data_dir(host.name) / 'apiserver-certs'}",
        "--profiling=false",
        "--allow-privileged=true",
    ]
    if topology.etcd.tls:
        client = pki.etcd_client("apiserver-client")
        argv += [f"--etcd-cafile={pki.etcd_ca.cert}", f"--etcd-certfile={client.cert}", f"--etcd-keyfile={client.key}"]
    if topology.apiserver.shutdown_delay_s:
        argv.append(f"--shutdown-delay-duration={int(topology.apiserver.shutdown_delay_s * 1000)}ms")
    argv += [f"--{name.lstrip('-')}={value}" for name, value in topology.apiserver.extra_flags.items()]
    health = HealthProbe("https", address, topology.apiserver.port, "/readyz", ca=pki.ca.cert)
    return ComponentSpec(Component.APISERVER, host.name, argv, topology.restart_policy(Component.APISERVER), health,
                         files={auth_config: authentication_config(topology.apiserver.anonymous_health_only)})
