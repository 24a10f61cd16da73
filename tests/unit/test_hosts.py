"""The Hosts part (harness/target/hosts.py): a backend writes `run` once; exec, read_file, the process facts and the
testinfra host derive from it. Shown here on hosts that are this machine (each command run locally) and on a host
that cannot be reached."""

import os
import subprocess

import pytest

from harness.errors import ClusterError
from harness.shell import CommandError
from harness.target.hosts import Hosts, Ran


class LocalHosts(Hosts):
    """Two names for this machine, and one host whose transport is broken."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, list[str]]] = []

    def hosts(self, role=None):
        return ["here", "there", "unreachable"]

    def run(self, host, argv, *, timeout=60.0):
        self.ran.append((host, list(argv)))
        if host == "unreachable":
            raise ClusterError(f"{host} does not answer", "check the host")
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return Ran(tuple(argv), done.returncode, done.stdout, done.stderr)

    def put_file(self, host, path, text):
        raise AssertionError("not used here")


def test_exec_is_the_output_of_run_and_a_failure_is_a_typed_error_naming_the_command():
    hosts = LocalHosts()
    assert hosts.exec("here", ["echo", "hello"]) == "hello\n"
    with pytest.raises(CommandError) as raised:
        hosts.exec("here", ["sh", "-c", "echo no such thing >&2; exit 3"])
    assert raised.value.code == 3 and raised.value.argv == ["sh", "-c", "echo no such thing >&2; exit 3"]
    assert "no such thing" in str(raised.value)
    # unchecked: a failing command's output, and nothing from a host that cannot be reached
    assert hosts.exec("here", ["sh", "-c", "echo partial; exit 1"], check=False) == "partial\n"
    assert hosts.exec("unreachable", ["true"], check=False) == ""
    with pytest.raises(ClusterError, match="does not answer"):
        hosts.exec("unreachable", ["true"])


def test_the_process_facts_come_through_run():
    hosts = LocalHosts()
    assert hosts.process_state("here", os.getpid()) in {"R", "S"}
    assert hosts.process_started("here", os.getpid()) == hosts.process_started("there", os.getpid()) is not None
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert hosts.process_state("here", gone.pid) is None
    assert all(argv[0] == "cat" for _, argv in hosts.ran)


def test_the_testinfra_host_runs_each_of_its_commands_through_run(tmp_path):
    hosts = LocalHosts()
    (tmp_path / "config").write_text("bind :6443\n")
    host = hosts.testinfra("there")
    assert host.file(str(tmp_path / "config")).content_string == "bind :6443\n"
    assert host.file(str(tmp_path / "config")).exists and not host.file(str(tmp_path / "absent")).exists
    assert host.run("exit 4").rc == 4
    assert host.run("echo %s", "quoted; not run").stdout == "quoted; not run\n"
    assert host.process.get(pid=os.getpid()).pid == os.getpid()
    assert hosts.ran and all(name == "there" and argv[:2] == ["/bin/sh", "-c"] for name, argv in hosts.ran)


def test_a_host_the_target_does_not_have_is_named_with_the_hosts_it_has():
    with pytest.raises(KeyError, match="here, there, unreachable"):
        LocalHosts().testinfra("elsewhere")
