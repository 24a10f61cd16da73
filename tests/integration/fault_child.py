"""A stand-in for a pytest process that dies mid-fault (used by test_faults.py and test_kind_cluster.py).

    python -m tests.integration.fault_child <run_dir> <mode> [host]
    mode: journal-only | with-block (ha3 on the process backend: a partition and a pause);
          rotation (ha3: c1's apiserver serving certificate and c2's etcd peer certificate rotated);
          scale (ha3-scale: the spare c4 joined as a controller; one fault only);
          keepers (any target, e.g. a remote one: kube-scheduler@host held, kube-controller-manager@host's flags
          overridden);
          work (any target: a work monitor running, its namespaces made; no fault)
Prints READY once the faults are in place, then sleeps until it is killed. SIGUSR1 writes every thread's stack to
standard error (what a test shows when the child does not exit in time).
"""

import faulthandler
import signal
import sys
import time
from pathlib import Path

from harness.backends import registry
from harness.faults import ModifyFlags, Nemesis, Partition, Pause, RotateCertificate, Stop
from harness.faults.scale import JoinControllers
from harness.faults.signals import heal_on_signals
from harness.history import History
from harness.monitors.work import WorkMonitor

faulthandler.register(signal.SIGUSR1, all_threads=True)
cluster = registry.open_target(Path(sys.argv[1]))
nemesis = Nemesis(cluster)
if sys.argv[2] == "keepers":
    host = sys.argv[3]
    faults = [Stop(component=f"kube-scheduler@{host}", signal="SIGKILL"),
              ModifyFlags(component=f"kube-controller-manager@{host}", add={"--v": "3"})]
elif sys.argv[2] == "rotation":
    faults = [RotateCertificate(component="kube-apiserver@c1"), RotateCertificate(component="etcd@c2")]
elif sys.argv[2] == "work":
    monitor = WorkMonitor(cluster, History()).start()
    print("READY", flush=True)
    time.sleep(600)
    sys.exit(0)
elif sys.argv[2] == "scale":
    with heal_on_signals(nemesis), nemesis.fault(JoinControllers(hosts=["c4"])):
        print("READY", flush=True)
        time.sleep(600)
    sys.exit(0)
else:
    faults = [Partition(side_a=["c1"], side_b=["c2", "c3"]), Pause(component="kube-scheduler@c2")]
with heal_on_signals(nemesis):
    with nemesis.fault(faults[0]), nemesis.fault(faults[1]):
        print("READY", flush=True)
        time.sleep(600)
