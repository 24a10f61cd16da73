"""What a target can do. A fault or a scenario names the capabilities it needs; a target that lacks one makes it
unavailable with the reason (never a check of which backend it is)."""

from __future__ import annotations

from enum import Enum


class Capability(str, Enum):
    SIGNAL = "signal"
    HOLD = "hold"
    OVERRIDE_ARGS = "override-args"
    NETWORK = "network"
    SHAPE = "shape"
    NODE_POWER = "node-power"
    NODE_DISCONNECT = "node-disconnect"
    SUPERVISOR = "supervisor"
    LB_ADMIN = "lb-admin"
    RUN_FILES = "run-files"
    ETCD_DATA = "etcd-data"
    HOLLOW_NODES = "hollow-nodes"
    HOST_BANDWIDTH = "host-bandwidth"
    PODS = "pods"
    NODES = "nodes"
    STATIC_PODS = "static-pods"
    SELF_HOSTED = "self-hosted"
    RELEASES = "releases"
    SCALE = "scale"
    WORK_PROBES = "work-probes"

    @property
    def meaning(self) -> str:
        return MEANING[self]


MEANING = {
    Capability.SIGNAL: "send a signal to a control-plane component's process",
    Capability.HOLD: "keep a component down until it is released",
    Capability.OVERRIDE_ARGS: "run a component with another command line until it is restored",
    Capability.NETWORK: "drop packets between hosts, or at random on a host's link (iptables inside the hosts)",
    Capability.SHAPE: "limit a host's link rate (tbf) and restore the cluster's own link",
    Capability.NODE_POWER: "power a whole host off and on, freeze it, or power-cycle several at once",
    Capability.NODE_DISCONNECT: "remove a host's network interface while its processes run on",
    Capability.SUPERVISOR: "Quorum's supervisor runs the components: every start and exit is recorded, and the "
                           "restart policy is the topology's",
    Capability.LB_ADMIN: "the load balancer's own view of each apiserver (HAProxy's admin socket)",
    Capability.RUN_FILES: "the cluster's configuration files and keys are the ones Quorum wrote in the run directory",
    Capability.ETCD_DATA: "etcd members' command lines and data directories are Quorum's to rewrite (member "
                          "remove/add, restore from a snapshot)",
    Capability.HOLLOW_NODES: "hollow nodes (kwok): a topology's, or an inventory's hollow_nodes on a disposable target",
    Capability.HOST_BANDWIDTH: "iperf3 between the cluster's hosts",
    Capability.PODS: "real kubelets that run pods",
    Capability.NODES: "the API lists the Node objects of real kubelets and the pods on them (read only)",
    Capability.STATIC_PODS: "the control plane runs as kubelet static pods from manifests on each node's disk",
    Capability.SELF_HOSTED: "a self-hosted control plane (kube-apiserver a DaemonSet) whose pods a pod checkpointer "
                            "keeps on each control-plane node's disk",
    Capability.RELEASES: "run a control-plane component or an etcd member from another release's binaries, which "
                         "every host sees at the toolchain cache's path",
    Capability.WORK_PROBES: "objects of Quorum's own in the API, created and deleted to see the controllers work "
                            "(namespaces of its own, Deployments whose pods name no scheduler and run nowhere): every "
                            "cluster Quorum builds; an inventory's work_probes: true, or a disposable one",
    Capability.SCALE: "join a spare host to the control plane and make a controller a spare again (its components "
                      "configured or removed, the other apiservers' command lines rewritten, the load balancer "
                      "reconfigured without a restart)",
}
