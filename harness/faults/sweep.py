"""`quorum heal`: undo what faults of a killed harness left behind.

First the journal: every fault begun and not healed is rebuilt from its record and healed. Then a sweep that needs
no journal (a harness can die between acting and journaling only if the journal write itself failed): every
Quorum-tagged firewall rule and every shaped link on every host, then what only the target knows (held or
overridden components, stopped processes, held manifests).
"""

from __future__ import annotations

from harness.errors import QuorumError
from harness.faults.base import heal_leftovers
from harness.target.capabilities import Capability
from harness.target.protocol import Target


def sweep(target: Target) -> list[str]:
    done = []
    for host in target.hosts():
        try:
            if Capability.NETWORK in target.capabilities() and (removed := target.heal_network(host)):
                done.append(f"{removed} fault rules on {host}")
            if Capability.SHAPE in target.capabilities() and target.restore_link(host):
                done.append(f"shaping on {host}")
        except QuorumError as error:  # a host that is down: the others are still swept
            done.append(f"could not sweep {host}: {error}")
    return done + target.sweep()


def heal_cluster(target: Target) -> list[str]:
    return [f"healed {d}" for d in heal_leftovers(target)] + sweep(target)
