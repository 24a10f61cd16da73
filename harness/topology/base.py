"""The names and the strictness every part of a topology shares."""

from __future__ import annotations

import ipaddress
from enum import Enum, IntEnum

from typing import get_args

from pydantic import BaseModel, ConfigDict, model_validator

QUORUM_RANGE = ipaddress.ip_network("10.213.0.0/16")  # every Quorum subnet lies inside; guarded by an unreachable route


class Role(str, Enum):
    CONTROLLER = "controller"  # apiserver, controller-manager, scheduler (and etcd unless dedicated etcd hosts exist)
    ETCD = "etcd"  # dedicated etcd member
    LOADBALANCER = "loadbalancer"  # HAProxy in front of the apiservers
    NODES = "nodes"  # runs one kwok controller that plays the kubelet of a share of the hollow nodes
    # a controller's machine, provisioned but running no component: the scale suite joins it to the control plane
    # (and a scale-down makes a controller a spare again); its address, certificates and LB entry exist from the start
    SPARE = "spare"


class FixedPort(IntEnum):
    """The ports Quorum's components listen on whatever the topology says: a configurable port must differ."""

    ETCD_CLIENT = 2379
    ETCD_PEER = 2380
    KWOK = 10247
    CONTROLLER_MANAGER = 10257
    SCHEDULER = 10259


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

    @model_validator(mode="before")
    @classmethod
    def _yes_or_no_only_where_asked(cls, data: object) -> object:
        """YAML's true and false are not numbers, addresses or names: pydantic would read `port: true` as port 1."""
        if isinstance(data, dict):
            for name, value in data.items():
                field = cls.model_fields.get(name) if isinstance(name, str) else None
                if isinstance(value, bool) and field is not None and field.annotation is not bool \
                        and bool not in get_args(field.annotation):
                    raise ValueError(f"{name}: {str(value).lower()} is a yes or no, not what {name} takes; fix: give "
                                     f"{name} a number or a name")
        return data
