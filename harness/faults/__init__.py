"""Faults: each one small class with available/plan/act/undo written against the Target protocol; one family per
file (component, network, node, etcd, pod, scale). A new fault is one file (docs/design.md)."""

from harness.faults.base import Fault, Nemesis
from harness.faults.cert_rotation import RotateCertificate
from harness.faults.component import Kill, ModifyFlags, Pause, Stop
from harness.faults.etcd import LoseQuorumForGood, RemoveMember
from harness.faults.etcd_upgrade import EtcdUpgrade
from harness.faults.heartbeats import StopNodeHeartbeats
from harness.faults.sweep import heal_leftovers
from harness.faults.lease import IsolateLeaseHolder
from harness.faults.network import Bandwidth, IsolateEtcdLeader, Latency, PacketLoss, Partition
from harness.faults.node import NodeDisconnect, NodeKill, NodePause, NodeRestart
from harness.faults.pod import ContainerKill
from harness.faults.rollout import Rollout
from harness.faults.scale import JoinControllers, RetireControllers
from harness.faults.upgrade import Upgrade

__all__ = ["Fault", "Nemesis", "heal_leftovers", "Kill", "Pause", "Stop", "ModifyFlags", "Partition",
           "IsolateEtcdLeader", "Bandwidth", "PacketLoss", "Latency", "RemoveMember", "LoseQuorumForGood",
           "NodeKill", "NodePause", "NodeRestart", "NodeDisconnect", "ContainerKill", "IsolateLeaseHolder", "Rollout",
           "Upgrade", "EtcdUpgrade", "RotateCertificate", "JoinControllers", "RetireControllers", "StopNodeHeartbeats"]
