"""`quorum heal`: undo what faults of a killed harness left behind.

First the journal: every fault begun and not healed is reconstructed and healed. Then a sweep that needs
no journal (a harness can die between acting and journaling only if the journal write itself failed):
tagged iptables rules, shaping qdiscs, stopped processes, held or overridden components; on kind, held
static-pod manifests.
"""

from __future__ import annotations

import signal

from harness.backends.process.up import _pids_in
from harness.backends.process.target import Cluster
from harness.faults.base import heal_leftovers
from harness.faults.network import remove_tagged_rules, restore_link
from harness.faults.process import _signal, process_state, terminate
from harness.faults.static_pod import put_back_held_manifests


def sweep(cluster: Cluster) -> list[str]:
    done = []
    for host in cluster.topology.hosts:
        removed = remove_tagged_rules(cluster, host.name)
        if removed:
            done.append(f"{removed} fault rules on {host.name}")
        qdisc = cluster.exec(host.name, ["tc", "qdisc", "show", "dev", cluster.link(host.name), "root"], check=False)
        baseline = cluster.topology.network.link_rate_mbit
        if " netem " in f" {qdisc} " or (" tbf " in f" {qdisc} " and not (baseline and f"{baseline:g}Mbit" in qdisc)):
            cluster.exec(host.name, ["tc", "qdisc", "del", "dev", cluster.link(host.name), "root"], check=False)
            restore_link(cluster, host.name)
            done.append(f"shaping on {host.name}")
    for pid in _pids_in(cluster.state.netns):
        if process_state(pid) == "T":
            _signal(pid, signal.SIGCONT)
            done.append(f"resumed pid {pid}")
    for component in cluster.specs:
        control = cluster.control(component)
        if control.held() or control.overridden():
            control.release()
            control.clear_override()
            terminate(cluster, component)  # it may be running the bad command line
            done.append(f"restored {component}")
            control.kick()
        elif control.child_pid() is None:
            # only a component that is not running: a kick waits for the next exit and restarts it then, whatever
            # its policy, so a kick left for a running one would undo a later test's `never`
            control.kick()
            done.append(f"started {component}")
    return done


def heal_cluster(cluster: Cluster) -> list[str]:
    healed = [f"healed {d}" for d in heal_leftovers(cluster)]
    if cluster.state.backend == "kind":  # no Quorum-made rules, shaping or supervised components there
        return healed + put_back_held_manifests(cluster)
    return healed + sweep(cluster)
