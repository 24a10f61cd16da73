"""The names and the strictness every part of a topology shares."""

from __future__ import annotations

import ipaddress
from enum import Enum

from pydantic import BaseModel, ConfigDict

QUORUM_RANGE = ipaddress.ip_network("10.213.0.0/16")  # every Quorum subnet lies inside; guarded by an unreachable route


class Role(str, Enum):
    CONTROLLER = "controller"  # apiserver, controller-manager, scheduler (and etcd unless dedicated etcd hosts exist)
    ETCD = "etcd"  # dedicated etcd member
    LOADBALANCER = "loadbalancer"  # HAProxy in front of the apiservers
    NODES = "nodes"  # runs one kwok controller that plays the kubelet of a share of the hollow nodes
    # a controller's machine, provisioned but running no component: the scale suite joins it to the control plane
    # (and a scale-down makes a controller a spare again); its address, certificates and LB entry exist from the start
    SPARE = "spare"


class Component(str, Enum):
    ETCD = "etcd"
    APISERVER = "kube-apiserver"
    CONTROLLER_MANAGER = "kube-controller-manager"
    SCHEDULER = "kube-scheduler"
    HAPROXY = "haproxy"
    KWOK = "kwok"


class Strict(BaseModel):
    # no inf/nan: a topology's numbers become timings and rates in config files and command lines
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
