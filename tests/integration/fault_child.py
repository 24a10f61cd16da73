"""A stand-in for a pytest process that dies mid-fault (used by test_faults.py).

    python -m tests.integration.fault_child <run_dir> <mode>   mode: journal-only | with-block
Prints READY once the faults are in place, then sleeps until it is killed.
"""

import sys
import time
from pathlib import Path

from harness.backends.process.target import ProcessTarget
from harness.faults import Nemesis, Partition, Pause
from harness.faults.signals import heal_on_signals

cluster = ProcessTarget(Path(sys.argv[1]))
nemesis = Nemesis(cluster)
with heal_on_signals(nemesis):
    with nemesis.fault(Partition(side_a=["c1"], side_b=["c2", "c3"])), nemesis.fault(Pause(component="kube-scheduler@c2")):
        print("READY", flush=True)
        time.sleep(600)
