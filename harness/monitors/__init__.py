"""Monitors observe the cluster while faults happen; they only append to the History."""

from harness.monitors.api import ApiProber
from harness.monitors.base import Monitor
from harness.monitors.etcd_writer import EtcdWriter
from harness.monitors.kube_writer import KubeWriter
from harness.monitors.leases import LeaderWatcher

__all__ = ["Monitor", "ApiProber", "EtcdWriter", "KubeWriter", "LeaderWatcher"]
