"""Errors a user meets before anything starts: each says what is wrong and what to run."""

from pathlib import Path

import pytest

from harness.backends import common, registry
from harness.errors import ClusterError, ToolchainError
from harness.toolchain.cache import BinaryCache
from harness.toolchain.install import Toolchain

CLUSTERS = Path(__file__).resolve().parents[2] / "clusters"


def test_up_as_a_normal_user_says_why_root_is_needed(monkeypatch, tmp_path):
    monkeypatch.setattr(common.os, "geteuid", lambda: 1000)
    with pytest.raises(ClusterError) as info:
        registry.get("process").up(CLUSTERS / "single.yaml", tmp_path / "run")
    assert "needs root" in info.value.problem and "network namespaces" in info.value.problem
    assert "sudo quorum up" in info.value.fix
    assert not (tmp_path / "run").exists()


def test_missing_binary_names_the_install_command(tmp_path):
    chain = Toolchain("v1.35.4", cache=BinaryCache(tmp_path / "empty"))
    with pytest.raises(ToolchainError) as info:
        chain.path("kube-apiserver")
    assert "kube-apiserver v1.35.4 is not installed" in info.value.problem
    assert info.value.fix == "quorum toolchain install --kubernetes v1.35.4"


def test_up_with_missing_binaries_fails_before_creating_anything(tmp_path, monkeypatch):
    monkeypatch.setattr(common.os, "geteuid", lambda: 0)
    monkeypatch.setenv("QUORUM_CACHE", str(tmp_path / "empty-cache"))
    topology = tmp_path / "t.yaml"
    topology.write_text((CLUSTERS / "single.yaml").read_text().replace("v1.34.4", "v1.35.4"))
    with pytest.raises(ToolchainError, match="quorum toolchain install --kubernetes v1.35.4"):
        registry.get("process").up(topology, tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_unknown_binary_is_a_programming_error_with_the_known_names():
    with pytest.raises(KeyError, match="kube-apiserver"):
        Toolchain().path("kube-apiservr")


def test_a_stop_fault_with_an_unsupported_signal_is_refused_with_the_choices():
    from harness.errors import FaultError
    from harness.faults import Stop

    with pytest.raises(FaultError, match='signal="SIGTERM" or "SIGKILL"'):
        Stop(component="etcd@c1", signal="SIGHUP")


def test_node_faults_are_refused_where_hosts_cannot_lose_power_with_the_reason():
    from harness.faults import NodeKill

    reason = NodeKill(host="c1").unavailable(registry.get("process").target_class)  # type: ignore[arg-type]
    assert reason == ("it needs node-power (power a whole host off and on, freeze it, or power-cycle several at once), "
                      "which the process backend does not offer")
    assert NodeKill(host="c1").unavailable(registry.get("docker").target_class) is None  # type: ignore[arg-type]


# HAProxy restarted three times by its keeper with a socket path it refuses (CI of 2026-11-23): the cause
# is the first ALERT of each attempt, the two summary lines after it used to fill the whole excerpt.
HAPROXY_RESTARTED = "".join(
    f"[NOTICE]   ({pid}) : haproxy version is 2.6.12-1+deb12u4\n"
    f"[ALERT]    ({pid}) : config : parsing [haproxy.cfg:5] : 'stats socket' : socket path '/tmp/x/lb.sock' "
    "too long (max 97)\n"
    f"[ALERT]    ({pid}) : config : Error(s) found in configuration file : haproxy.cfg\n"
    f"[ALERT]    ({pid}) : config : Fatal errors found in configuration.\n"
    for pid in (13602, 13611, 13613))


def test_a_failed_start_shows_the_cause_once_not_its_repeated_summary():
    lines = common.error_lines(HAPROXY_RESTARTED, limit=6)
    assert [line.split(" : ", 2)[-1] for line in lines] == [
        "parsing [haproxy.cfg:5] : 'stats socket' : socket path '/tmp/x/lb.sock' too long (max 97)",
        "Error(s) found in configuration file : haproxy.cfg",
        "Fatal errors found in configuration."]
    assert "(13613)" in lines[0]  # the latest attempt's line is the one kept


def test_a_failed_start_keeps_only_the_latest_error_lines():
    kinds = ["pods", "nodes", "leases", "csinodes", "services"]
    log = "\n".join(f"E1123 15:39:2{i}.03 13457 reflector.go:205 failed to list {kind}\nI1123 watching {kind}"
                    for i, kind in enumerate(kinds))
    assert [line.rsplit(" ", 1)[-1] for line in common.error_lines(log, limit=3)] == ["leases", "csinodes", "services"]


def test_a_network_lock_held_too_long_is_an_error_that_says_how_to_find_the_holder(monkeypatch, tmp_path):
    import fcntl

    from harness.net import netns

    monkeypatch.setattr(netns, "NETWORK_LOCK", tmp_path / "network.lock")
    with (tmp_path / "network.lock").open("a") as holder:  # another open file: flock conflicts as between processes
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(ClusterError) as info:
            with netns.network_lock(timeout_s=0.3):
                pass
    assert "held Quorum's network lock" in info.value.problem and "fuser -v" in info.value.fix
    with netns.network_lock(timeout_s=0.3):  # released by its holder: taken at once
        pass


def test_a_run_dir_that_holds_someone_elses_files_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(common.os, "geteuid", lambda: 0)
    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    (home / "data" / "thesis.tex").write_text("years of work")
    with pytest.raises(ClusterError) as info:
        registry.get("process").up(CLUSTERS / "single.yaml", home)
    assert "is not empty and not a Quorum run directory" in info.value.problem and "new or empty" in info.value.fix
    assert sorted(p.name for p in home.iterdir()) == ["data"] and (home / "data" / "thesis.tex").exists()
