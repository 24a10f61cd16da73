"""A kind control plane's components are kubeadm's static pods, run by each control-plane node's kubelet from
/etc/kubernetes/manifests; Quorum holds and overrides them through the kubelet as on any kubeadm host
(harness/components/static_pod.py), keeping what it moves aside beside them in /etc/kubernetes."""

from __future__ import annotations

from harness.components.static_pod import (CRASH_LOOP, STATIC_PODS, StaticPods, checked, process_name,  # noqa: F401
                                           signal_name)

MANIFESTS = "/etc/kubernetes/manifests"
ETCD_CLIENT_PORT = 2379  # kubeadm's stacked etcd listens for clients on the node's address and on loopback
KIND = StaticPods(MANIFESTS, "/etc/kubernetes/.quorum-")


def held_path(component: str) -> str:
    return KIND.held_path(component)
