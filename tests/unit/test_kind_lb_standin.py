"""The Envoy stand-in renders kind's xDS files (as kind v0.33 renders its templates) into HAProxy's config, and
Quorum's kind topology configures those files (harness/backends/kind/load_balancer.py)."""

import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.backends.kind.load_balancer import configure, configured_cds, configured_lds, without_health_checks
from harness.backends.kind.lb_standin import Endpoint, endpoints, render
from harness.backends.kind.topology import KindLoadBalancer, load_kind_topology

# kind's ProxyLDSConfigTemplate and ProxyCDSConfigTemplate rendered for three control planes
LDS = '''
resources:
- "@type": type.googleapis.com/envoy.config.listener.v3.Listener
  name: listener_apiserver
  address:
    socket_address:
      address: "0.0.0.0"
      port_value: 6443
  filter_chains:
  - filters:
    - name: envoy.filters.network.tcp_proxy
      typed_config:
        "@type": type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy
        stat_prefix: ingress_tcp
        cluster: kube_apiservers
'''
CDS = '''
resources:
- "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
  name: kube_apiservers
  connect_timeout: 0.25s
  type: STRICT_DNS
  lb_policy: ROUND_ROBIN
  dns_lookup_family: V4_PREFERRED
  health_checks:
  - timeout: 3s
    interval: 2s
    unhealthy_threshold: 2
    healthy_threshold: 1
    http_health_check:
      path: /healthz
  load_assignment:
    cluster_name: kube_apiservers
    endpoints:
    - lb_endpoints:
      - endpoint:
          address:
            socket_address:
              address: quorum-control-plane
              port_value: 6443
      - endpoint:
          address:
            socket_address:
              address: quorum-control-plane2
              port_value: 6443
      - endpoint:
          address:
            socket_address:
              address: quorum-control-plane3
              port_value: 6443
'''
EMPTY = "resources: []"


def test_endpoints_are_read_in_order():
    assert endpoints(LDS) == [Endpoint("0.0.0.0", 6443)]
    assert [e.host for e in endpoints(CDS)] == ["quorum-control-plane", "quorum-control-plane2", "quorum-control-plane3"]


def test_the_listener_and_every_apiserver_become_haproxy_lines_with_kinds_health_check():
    config = render(LDS, CDS)
    assert "  bind 0.0.0.0:6443" in config
    assert config.count("  server apiserver") == 3 and "  server apiserver2 quorum-control-plane3:6443" in config
    assert "http-check send meth GET uri /healthz" in config and "inter 2s fall 2 rise 1" in config


def test_kinds_own_envoy_config_gives_up_on_a_refused_connection_and_keeps_connections_to_a_server_marked_down():
    config = render(LDS, CDS)
    assert "  retries 0" in config and "redispatch" not in config and "shutdown-sessions" not in config


def test_quorums_reference_balancer_checks_readyz_closes_connections_of_a_server_marked_down_and_redispatches():
    reference = KindLoadBalancer()
    config = render(configured_lds(LDS, reference), configured_cds(CDS, reference))
    assert "http-check send meth GET uri /readyz" in config
    assert "inter 2s fall 2 rise 1 check check-ssl verify none on-marked-down shutdown-sessions" in config
    assert "  retries 2\n  option redispatch 1\n" in config  # three attempts, each on the next server
    assert config.count("  server apiserver") == 3


def test_kinds_own_settings_written_back_render_exactly_what_kind_renders():
    kinds = KindLoadBalancer(health_check_path="/healthz", close_connections_on_failure=False, connect_attempts=1)
    assert render(configured_lds(LDS, kinds), configured_cds(CDS, kinds)) == render(LDS, CDS)


def test_a_cluster_without_health_checks_is_balanced_blindly_as_envoy_does():
    cds = without_health_checks(CDS)
    config = render(LDS, cds)
    assert "health_checks" not in cds and config.count("  server apiserver") == 3
    backend = config.split("backend kube_apiservers")[1]
    assert "httpchk" not in backend and " check" not in backend


def test_nothing_is_started_before_kind_writes_a_listener_and_an_empty_cluster_has_no_servers():
    assert render(EMPTY, EMPTY) is None
    assert "server " not in render(LDS, EMPTY).split("backend kube_apiservers")[1].replace("default-server", "")


def test_an_ipv6_listener_is_bracketed():
    assert "  bind [::]:6443" in render(LDS.replace('"0.0.0.0"', '"::"'), CDS)


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed (quorum toolchain install)")
@pytest.mark.parametrize("settings", [None, KindLoadBalancer()], ids=["kinds-own", "quorums-reference"])
def test_haproxy_accepts_the_rendered_configuration(tmp_path, settings):
    lds, cds = (LDS, CDS) if settings is None else (configured_lds(LDS, settings), configured_cds(CDS, settings))
    path = tmp_path / "haproxy.cfg"
    path.write_text(render(lds, cds).replace("/home/envoy/haproxy.sock", str(tmp_path / "s.sock")))
    result = subprocess.run(["haproxy", "-c", "-f", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_single_control_plane_has_no_balancer_to_configure():
    single = load_kind_topology(Path(__file__).resolve().parents[2] / "clusters/defects/kind-restart-never.yaml")
    assert single.kind.control_planes == 1
    assert "none" in configure(SimpleNamespace(topology=single))  # kind created none: nothing is read or written
