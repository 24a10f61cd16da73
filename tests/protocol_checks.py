"""The protocol-conformance checks every registered backend's target must pass: the same checks on the fake target
(tests/unit/test_protocol_conformance.py) and on a real cluster of each backend (tests/integration, one test named
test_the_target_protocol_holds_on_<backend> per backend). Each check is read-only or undone at once, so it runs on
a cluster other tests share: a pause of a scheduler, a tagged rule, a link shaped to a high rate."""

from __future__ import annotations

import secrets
import time

import pytest

from harness.errors import QuorumError
from harness.target.capabilities import Capability
from harness.target.health import LEASES
from harness.target.protocol import HostRole, Target, Unsupported
from harness.topology import Component
from harness.wait import eventually

# what each capability's methods are, called with arguments that would act if the target had the capability
GATED = {
    Capability.NODE_POWER: lambda t: t.power.off([]),
    Capability.NODE_DISCONNECT: lambda t: t.power.disconnect(t.hosts()[0]),
    Capability.LB_ADMIN: lambda t: t.health.lb_server_states(),
    Capability.RUN_FILES: lambda t: t.secret_files(),
    Capability.ETCD_DATA: lambda t: t.etcd_data_dir(t.hosts(HostRole.ETCD)[0]),
    Capability.SIGNAL: lambda t: t.signal(Component.SCHEDULER, t.hosts(HostRole.CONTROLLER)[0], "SIGCONT"),
    Capability.HOLD: lambda t: t.hold(Component.SCHEDULER, t.hosts(HostRole.CONTROLLER)[0]),
    Capability.OVERRIDE_ARGS: lambda t: t.restore_command_line(Component.SCHEDULER, t.hosts(HostRole.CONTROLLER)[0]),
    Capability.NETWORK: lambda t: t.network.drop(t.hosts()[0], sources=[t.hosts()[-1]], tag="protocol"),
    Capability.SHAPE: lambda t: t.network.shape(t.hosts()[0], 40000.0, tag="protocol"),
    Capability.PODS: lambda t: t.pod_containers(t.hosts()[0], "kube-system", "etcd"),
}


def offers(target: Target, capability: Capability) -> bool:
    """Whether this target offers `capability`: its backend's targets do, and its topology has it (a kind cluster is
    static pods or self-hosted; an inventory says how each component runs)."""
    from harness.backends import registry

    return registry.get(target.backend).lacks(capability, topology=target.topology) is None


def keeper_known(target: Target) -> bool:
    """Whether the target knows what restarts its components (Quorum's supervisor, a kubelet, systemd, or a model
    of one): only a target that does not may refuse to say how soon or how often, or to hold one (a remote one
    whose inventory says `runs_as: process`). One that holds components knows how soon a held one returns."""
    if Capability.SUPERVISOR in target.capabilities() or offers(target, Capability.STATIC_PODS):
        return True
    if Capability.HOLD not in target.capabilities():
        return False
    try:
        return target.held_return_s(Component.SCHEDULER, target.hosts(HostRole.CONTROLLER)[-1]) > 0
    except Unsupported:
        return False


def promised_or_unknown(target: Target, call) -> float | None:
    try:
        return call()
    except Unsupported as unknown:
        assert not keeper_known(target) and unknown.problem and unknown.fix, unknown
        return None


def check_target(target: Target, *, hold: bool = True, shell: bool = True) -> None:
    """hold=False leaves out the hold of a scheduler (the slowest check: the keeper's return and the cluster's
    settling), for a caller whose target's holds another test proves on the same hosts. shell=False leaves out the
    checks that run a shell inside a host (a target that only models its commands)."""
    check_identity(target)
    check_health(target)
    check_components(target)
    check_commands(target)
    if shell:
        check_shell(target)
    if Capability.SIGNAL in target.capabilities():
        check_signals(target)
    if hold and Capability.HOLD in target.capabilities():
        check_hold(target)
    if Capability.NETWORK in target.capabilities():
        check_network(target)
    if Capability.PODS in target.capabilities():
        check_pods(target)
    check_capabilities(target)


def check_identity(target: Target) -> None:
    hosts = target.hosts()
    assert hosts and len(set(hosts)) == len(hosts), hosts
    controllers, members = target.hosts(HostRole.CONTROLLER), target.hosts(HostRole.ETCD)
    assert controllers and set(controllers) <= set(hosts) and set(members) <= set(hosts), (controllers, members)
    assert target.component_hosts(Component.APISERVER) == controllers
    assert target.component_hosts("etcd") == members
    assert target.name and target.run_id and target.backend
    assert target.capabilities() == type(target).capabilities()


def check_health(target: Target) -> None:
    target.ensure_local()
    # one answer missing its timeout on a busy machine is not a wrong health check; a healthy cluster answers again
    # (docs/design.md, the official CI of stop 46)
    first = target.health.problems()
    if first:
        print(f"check_health: first look {first}; waiting up to {target.settle_s:.0f} s")
    problems = target.health.problems_after(target.settle_s) if first else first
    assert problems == [], problems
    assert target.api.ready()
    assert target.etcd.leader() in target.hosts(HostRole.ETCD)
    assert set(target.etcd_urls) == {target.etcd_url(h) for h in target.hosts(HostRole.ETCD)}
    assert all(target.etcd_member_named(target.etcd_url(h)) == h for h in target.hosts(HostRole.ETCD))
    assert target.etcd_member_named("https://192.0.2.1:2379") is None
    holders = target.health.lease_holders()
    assert set(holders) == set(LEASES) and set(holders.values()) <= set(target.hosts()), holders
    election, etcd = target.leader_election(), target.etcd_settings()  # what the failover bounds derive from
    assert 0 < election.retry_period_s < election.renew_deadline_s < election.lease_duration_s, election
    assert 0 < 5 * etcd.heartbeat_ms <= etcd.election_timeout_ms, etcd
    budget = promised_or_unknown(target, lambda: target.restart_budget_s(Component.SCHEDULER))
    assert budget is None or budget > 0, budget
    if Capability.HOLD in target.capabilities() and keeper_known(target):
        assert target.held_return_s(Component.ETCD, target.hosts(HostRole.ETCD)[0]) > 0


def check_components(target: Target) -> None:
    host = target.hosts(HostRole.CONTROLLER)[-1]
    for component in (Component.ETCD, Component.APISERVER, Component.SCHEDULER):
        assert target.pid(component, host) is not None, component
        assert target.health.component_healthy(component, host), component
        restarts = promised_or_unknown(target, lambda: target.restarts(component, host))
        assert restarts is None or restarts >= 0, restarts
        assert isinstance(target.log_tail(component, host, 5), str)
        # what it offers is what the target claims for it: a keeper of a kind its KEEPERS name
        assert isinstance(target.keeper(component), target.KEEPERS), (component, type(target.keeper(component)))
    argv = target.command_line(Component.APISERVER, host)
    assert argv and any(a.startswith("--etcd-servers=") for a in argv), argv[:3]
    flags = target.live_flags(Component.APISERVER)
    assert set(flags) == set(target.component_hosts(Component.APISERVER)) and "--etcd-servers" in flags[host]
    assert not target.held(Component.SCHEDULER, host)


def check_commands(target: Target) -> None:
    host = target.hosts(HostRole.CONTROLLER)[0]
    assert target.exec(host, ["echo", "quorum-protocol"]).strip() == "quorum-protocol"
    assert isinstance(target.exec(host, ["false"], check=False), str)
    with pytest.raises(QuorumError):
        target.exec(host, ["false"])
    assert target.run(host, ["false"]).rc != 0 and target.run(host, ["echo", "x"]).stdout.strip() == "x"
    assert target.address(host)
    if {Capability.SHAPE, Capability.NETWORK} & target.capabilities():  # what shaping and random loss act on
        assert target.link(host)


def check_shell(target: Target) -> None:
    """`run` keeps a command's exit code and its two outputs apart, and testinfra reaches the host through it."""
    host = target.hosts(HostRole.CONTROLLER)[0]
    ran = target.run(host, ["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (ran.rc, ran.stdout.strip(), ran.stderr.strip()) == (3, "out", "err"), ran
    infra = target.testinfra(host)
    assert infra.run("exit 4").rc == 4 and infra.file("/proc/self/stat").exists


def check_signals(target: Target) -> None:
    """SIGSTOP a scheduler and SIGCONT it at once: exactly that process stops and continues."""
    host = target.hosts(HostRole.CONTROLLER)[-1]
    pid = target.pid(Component.SCHEDULER, host)
    try:
        target.signal(Component.SCHEDULER, host, "SIGSTOP", pid=pid)
        assert _eventually(lambda: target.process_state(host, pid) == "T"), target.process_state(host, pid)
    finally:
        target.signal(Component.SCHEDULER, host, "SIGCONT", pid=pid)
    assert _eventually(lambda: target.process_state(host, pid) not in ("T", None))
    assert target.pid(Component.SCHEDULER, host) == pid


def check_network(target: Target) -> None:
    """A tagged rule is added and removed exactly; a link shaped far above any real rate is restored."""
    first, second = target.hosts(HostRole.CONTROLLER)[:2] if len(target.hosts(HostRole.CONTROLLER)) > 1 else \
        (target.hosts()[0], target.hosts()[-1])
    tag = f"protocol{secrets.token_hex(2)}"
    try:
        target.network.drop(first, sources=[second], tag=tag)
        assert target.network.heal(first, tag) == 1
    finally:
        target.network.heal(first, tag)
    assert target.network.heal(first, tag) == 0
    if Capability.SHAPE in target.capabilities():
        try:
            target.network.shape(first, 40000.0, tag=f"{tag}a")
            target.network.shape(first, 30000.0, tag=f"{tag}b")  # a second fault's shaping replaces the first's
            assert target.network.restore_link(first, tag=f"{tag}a") is False, "an undo removed a later fault's shaping"
            assert target.network.restore_link(first, tag=f"{tag}b") is True
        finally:
            target.network.restore_link(first)
        assert target.network.restore_link(first) is False


def check_pods(target: Target) -> None:
    """The runtime lists exactly the running container of a control-plane node's etcd static pod; no container has
    a name that is not one (nothing is killed: killing is proven by the checkpointer scenario)."""
    host = target.hosts(HostRole.CONTROLLER)[0]
    # an earlier test may have just crashed and healed this member: its kubelet starts it again within its back-off
    assert _eventually(lambda: len(target.pod_containers(host, "kube-system", "etcd")) == 1, timeout_s=60.0)
    found = target.pod_containers(host, "kube-system", "etcd")
    assert len(found) == 1 and len(found[0]) == 64, found
    assert target.pod_containers(host, "kube-system", "no-such-container") == []
    with pytest.raises(ValueError):
        target.pod_containers(host, "kube-system", "etcd,labels.x==y")


# a capability one part offers beside its first: a target without the part at all is refused naming the part's
# first (a target that cannot power a host off has no Power part to ask for a disconnect)
WITHIN_PART = {Capability.NODE_DISCONNECT: Capability.NODE_POWER}


def check_capabilities(target: Target) -> None:
    """A capability the target lacks is refused with its name (or, lacking the whole part it belongs to, with the
    part's), never attempted."""
    for capability, call in GATED.items():
        if capability in target.capabilities():
            continue
        with pytest.raises(Unsupported) as refused:
            call(target)
        part = WITHIN_PART.get(capability)
        named = capability if part is None or part in target.capabilities() else part
        assert named.value in refused.value.problem and target.lacks(capability), (capability, refused.value.problem)


def check_hold(target: Target) -> None:
    """Hold a scheduler down and release it: no process while held (nothing restarts it), healthy again within
    what the cluster promises for a held component."""
    host = target.hosts(HostRole.CONTROLLER)[-1]
    pid = target.pid(Component.SCHEDULER, host)
    if not keeper_known(target):  # nothing known restarts it, so nothing can keep it down: refused, untouched
        with pytest.raises(Unsupported) as refused:
            target.hold(Component.SCHEDULER, host, "SIGKILL")
        assert refused.value.fix and target.pid(Component.SCHEDULER, host) == pid
        with pytest.raises(Unsupported):
            target.override_command_line(Component.SCHEDULER, host, target.command_line(Component.SCHEDULER, host))
        return
    target.hold(Component.SCHEDULER, host, "SIGKILL")
    try:
        assert target.held(Component.SCHEDULER, host)
        assert _eventually(lambda: target.pid(Component.SCHEDULER, host) is None)
        time.sleep(2)  # past a supervisor's or a kubelet's first restart, which a hold must prevent
        assert target.pid(Component.SCHEDULER, host) is None
    finally:
        target.release(Component.SCHEDULER, host)
    assert not target.held(Component.SCHEDULER, host)
    bound = target.held_return_s(Component.SCHEDULER, host)
    assert _eventually(lambda: target.health.component_healthy(Component.SCHEDULER, host), bound), bound
    assert target.health.problems_after(target.settle_s) == []


def _eventually(predicate, timeout_s: float = 5.0) -> bool:
    return eventually(predicate, timeout_s)
