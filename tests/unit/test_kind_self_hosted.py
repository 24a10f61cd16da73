"""The self-hosted workloads made from kubeadm's static pods (harness/backends/kind/self_hosted.py), on a manifest
shaped as kubeadm 1.34 writes it in a kind node."""

import yaml

from harness.backends.kind.cluster import KindShape, kind_config
from harness.backends.kind.self_hosted import CHECKPOINT, PORT_SHARING, workload

APISERVER = yaml.safe_load("""
apiVersion: v1
kind: Pod
metadata:
  annotations: {kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint: 10.213.58.2:6443}
  labels: {component: kube-apiserver, tier: control-plane}
  name: kube-apiserver
  namespace: kube-system
spec:
  containers:
  - command: [kube-apiserver, --advertise-address=10.213.58.2, --secure-port=6443, --permit-port-sharing=true]
    image: registry.k8s.io/kube-apiserver:v1.34.4
    livenessProbe: {httpGet: {host: 10.213.58.2, path: /livez, port: probe-port, scheme: HTTPS}}
    readinessProbe: {httpGet: {host: 10.213.58.2, path: /readyz, port: probe-port, scheme: HTTPS}}
    name: kube-apiserver
    ports: [{containerPort: 6443, name: probe-port, protocol: TCP}]
  hostNetwork: true
  priorityClassName: system-node-critical
""")
SCHEDULER = yaml.safe_load("""
metadata: {name: kube-scheduler, namespace: kube-system}
spec:
  containers:
  - command: [kube-scheduler, --bind-address=127.0.0.1, --leader-elect=true]
    livenessProbe: {httpGet: {host: 127.0.0.1, path: /livez, port: probe-port, scheme: HTTPS}}
    name: kube-scheduler
    ports: [{containerPort: 10259, name: probe-port, protocol: TCP}]
  hostNetwork: true
""")


def test_the_apiserver_becomes_a_checkpointed_daemonset_that_takes_each_nodes_address_from_the_downward_api():
    daemonset = workload("kube-apiserver", APISERVER, 3)
    template = daemonset["spec"]["template"]
    container = template["spec"]["containers"][0]
    assert daemonset["kind"] == "DaemonSet" and template["metadata"]["annotations"] == {CHECKPOINT: "true"}
    assert "--advertise-address=$(POD_IP)" in container["command"] and container["command"].count(PORT_SHARING) == 1
    assert container["env"] == [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
    # no host ports for the scheduler to refuse beside the static pod; the probes keep their port, by number
    assert "ports" not in container
    assert container["livenessProbe"]["httpGet"] == {"path": "/livez", "port": 6443, "scheme": "HTTPS"}
    assert template["spec"]["nodeSelector"] == {"node-role.kubernetes.io/control-plane": ""}
    assert template["spec"]["tolerations"] == [{"operator": "Exists"}] and template["spec"]["hostNetwork"]
    assert APISERVER["spec"]["containers"][0]["ports"], "the manifest read from the node is left as it was"


def test_the_scheduler_becomes_a_deployment_one_pod_per_control_plane_that_never_surges_onto_its_host_ports():
    deployment = workload("kube-scheduler", SCHEDULER, 3)
    spec = deployment["spec"]
    container = spec["template"]["spec"]["containers"][0]
    assert deployment["kind"] == "Deployment" and spec["replicas"] == 3
    assert spec["strategy"]["rollingUpdate"] == {"maxUnavailable": 1, "maxSurge": 0}
    anti = spec["template"]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti[0]["topologyKey"] == "kubernetes.io/hostname"
    assert container["livenessProbe"]["httpGet"]["host"] == "127.0.0.1"  # its node's loopback, with the host network
    assert spec["template"]["metadata"]["annotations"] == {}  # only the apiserver is checkpointed


def test_only_a_self_hosted_kind_cluster_lets_its_static_apiservers_share_their_port():
    def patches(shape: KindShape) -> str:
        return "\n".join(kind_config(shape, "k")["kubeadmConfigPatches"])

    assert "permit-port-sharing" in patches(KindShape(1, 0, self_hosted=True))
    assert "permit-port-sharing" not in patches(KindShape(1, 0))
