"""Faults: each one small class with available/inject/heal; one family per file."""

from harness.faults.anywhere import crash_and_keep_down, isolate_etcd_leader, kill_component, pause_component
from harness.faults.base import Fault, Nemesis, heal_leftovers
from harness.faults.container import NodeDisconnect, NodeKill, NodePause, NodeRestart
from harness.faults.etcd import LoseQuorumForGood, RemoveMember
from harness.faults.kind_node import KindEtcdLeaderPartition, KindNodePartition, KindNodePause
from harness.faults.network import Bandwidth, IsolateEtcdLeader, Latency, PacketLoss, Partition
from harness.faults.process import Kill, ModifyFlags, Pause, Stop
from harness.faults.static_pod import (KindNodesRestart, ManifestCorruption, StaticPodKill, StaticPodPause,
                                       StaticPodStop)

__all__ = ["Fault", "Nemesis", "heal_leftovers", "Kill", "Pause", "Stop", "ModifyFlags", "Partition",
           "IsolateEtcdLeader", "Bandwidth", "PacketLoss", "Latency", "RemoveMember", "LoseQuorumForGood",
           "NodeKill", "NodePause", "NodeRestart", "NodeDisconnect", "StaticPodKill", "StaticPodStop",
           "StaticPodPause", "ManifestCorruption", "KindNodesRestart", "KindNodePause", "KindNodePartition",
           "KindEtcdLeaderPartition", "kill_component", "crash_and_keep_down", "isolate_etcd_leader",
           "pause_component"]
