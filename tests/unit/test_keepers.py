"""What keeps a component of a remote target down or runs it with other flags (harness/components/static_pod.py,
harness/components/systemd_keeper.py) checks every value that reaches a host's shell or a unit file, and the host
journal tells a live harness from a dead one (harness/backends/remote/host_journal.py). Their behaviour against a
real kubelet and a real systemd is tested in tests/integration/test_kind_cluster.py."""

import os
import subprocess
import sys

import pytest

from harness.backends.remote.host_journal import path
from harness.run.harness_process import Harness
from harness.components.static_pod import StaticPods
from harness.components.systemd_keeper import SystemdUnits, drop_in_text, exec_start_argument
from harness.errors import ClusterError, FaultError


def test_a_keepers_paths_and_names_are_checked_before_they_reach_a_shell():
    with pytest.raises(ValueError, match="plain characters"):
        StaticPods("/etc/kubernetes/manifests; reboot", "/var/lib/quorum/")
    with pytest.raises(ValueError, match="climbs out with '..'"):
        StaticPods("/etc/kubernetes/manifests", "/var/lib/../../quorum/")
    with pytest.raises(ValueError, match="holds a control character"):  # a second shell command in the hold script
        StaticPods("/etc/kubernetes/manifests\n", "/var/lib/quorum/")
    with pytest.raises(KeyError, match="not a systemd service name"):
        SystemdUnits("/var/lib/quorum/").held_marker("etcd.service\n")
    with pytest.raises(KeyError, match="not a systemd service name"):
        SystemdUnits("/var/lib/quorum/").held_marker("etcd.service; rm -rf /")
    with pytest.raises(KeyError, match="no static pod"):
        StaticPods("/etc/kubernetes/manifests", "/var/lib/quorum/").held_path("etcd$(reboot)")
    with pytest.raises(ClusterError, match="not a fault id"):
        path("../../etc/passwd")


def test_an_override_is_written_as_systemd_reads_execstart_back():
    assert exec_start_argument('say "hi" 100% $HOME \\n') == '"say \\"hi\\" 100%% $$HOME \\\\n"'
    text = drop_in_text(["/usr/bin/etcd", "--name=e1"])
    assert text.splitlines()[1:] == ["[Service]", "ExecStart=", 'ExecStart="/usr/bin/etcd" "--name=e1"']
    with pytest.raises(FaultError, match="control character"):
        drop_in_text(["/usr/bin/etcd", "--name=e1\nExecStartPre=/bin/reboot"])
    with pytest.raises(FaultError, match="needs a command line"):
        drop_in_text([])


def test_a_harness_is_alive_while_it_runs_on_this_machine_and_unknown_on_another():
    assert Harness.this().alive() is True
    child = subprocess.Popen([sys.executable, "-c", "import json, dataclasses; from harness.run."
                              "harness_process import Harness; print(json.dumps(dataclasses.asdict(Harness.this())))"],
                             stdout=subprocess.PIPE, text=True)
    import json

    gone = Harness(**json.loads(child.communicate()[0]))
    assert gone.pid == child.pid and gone.alive() is False  # it ended
    reused = Harness(**{**json.loads(json.dumps(Harness.this().__dict__)), "start": -1})
    assert reused.pid == os.getpid() and reused.alive() is False  # the same pid, another process
    assert Harness("another-machine", "boot", os.getpid(), 1).alive() is None


def test_only_a_kubelet_takes_time_of_its_own_to_act_on_a_changed_command_line():
    """A wait for a changed component adds this to its start-up allowance (scenarios/apiserver_flags): a kubelet
    picks a changed manifest up on its own schedule; a supervisor and systemd restart it when told."""
    from harness.backends.process.supervised_keeper import SupervisedKeeper
    from harness.components.static_pod_keeper import StaticPodKeeper
    from harness.components.systemd_keeper import SystemdKeeper
    from harness.thresholds import KUBELET_FILE_CHECK_S, KUBELET_MANIFEST_PICKUP_S

    assert StaticPodKeeper.override_applied_within_s == KUBELET_MANIFEST_PICKUP_S > KUBELET_FILE_CHECK_S
    assert SupervisedKeeper.override_applied_within_s == SystemdKeeper.override_applied_within_s == 0.0
