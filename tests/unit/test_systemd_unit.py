"""A systemd unit's restart promise as `systemctl show` prints it (systemd.service(5), systemd.unit(5)); against a
real systemd (a kind node's kubelet.service): tests/integration/test_kind_cluster.py."""

import math

import pytest

from harness.components.systemd_unit import UnitRestartPolicy, UnitUnreadable, parse_show, timespan_s

# systemd 252 (Debian 12), as a kind node prints it for kubelet.service
KUBELET_252 = "Restart=always\nRestartUSec=1s\nNRestarts=3\nLoadState=loaded\nStartLimitIntervalUSec=0\nStartLimitBurst=5\n"


@pytest.mark.parametrize("text, seconds", [("100ms", 0.1), ("1min 30s", 90.0), ("2h", 7200.0), ("0", 0.0),
                                           ("infinity", math.inf), ("1s 500ms", 1.5), ("250us", 0.00025)])
def test_systemd_time_spans_are_read_in_seconds(text, seconds):
    assert timespan_s(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "fast", "5 parsecs", "1s and more"])
def test_what_is_not_a_time_span_is_refused(text):
    with pytest.raises(ValueError):
        timespan_s(text)


def test_a_unit_restarted_always_after_a_second_without_a_rate_limit_promises_a_second_per_kill():
    policy = parse_show("kubelet.service", KUBELET_252)
    assert (policy.restart, policy.delay_s, policy.interval_s, policy.restarts) == ("always", 1.0, 0.0, 3)
    assert [policy.restart_delay_s(kill) for kill in (1, 2, 10)] == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("restart", ["no", "on-success", "on-watchdog"])
def test_a_unit_that_systemd_does_not_restart_after_a_kill_promises_never(restart):
    policy = parse_show("etcd.service", KUBELET_252.replace("Restart=always", f"Restart={restart}"))
    assert policy.restart_delay_s() == math.inf


def test_the_delay_grows_to_its_maximum_over_the_restart_steps():
    """systemd 254+: RestartSec=1s, RestartSteps=2, RestartMaxDelaySec=4s: 1 s, 2 s, then 4 s from the 3rd on."""
    policy = parse_show("x.service", KUBELET_252 + "RestartSteps=2\nRestartMaxDelayUSec=4s\n")
    assert [round(policy.restart_delay_s(kill), 3) for kill in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 4.0]
    # restarts the unit already made count: the next kill waits the later step
    assert round(policy.restart_delay_s(1, earlier_restarts=1), 3) == 2.0


def test_the_start_rate_limit_stops_quick_repeated_restarts():
    """The default rate limit (5 starts in 10 s) with the default 100 ms delay: the 6th quick kill is not restarted."""
    policy = UnitRestartPolicy("x.service", "on-failure", delay_s=0.1, burst=5, interval_s=10.0)
    assert policy.restart_delay_s(5) == pytest.approx(0.1)
    assert policy.restart_delay_s(6) == math.inf
    # restarts 3 s apart never put 5 starts in one 10 s interval
    assert UnitRestartPolicy("x.service", "always", delay_s=3.0).restart_delay_s(20) == 3.0


def test_a_unit_systemd_does_not_know_is_named_with_the_fix():
    with pytest.raises(UnitUnreadable, match=r"no loaded unit etcd-member.service \(LoadState=not-found\)") as raised:
        parse_show("etcd-member.service", "Restart=no\nLoadState=not-found\n")
    assert "components.<name>.unit" in raised.value.fix


def test_output_quorum_cannot_read_is_an_error_not_a_guess():
    with pytest.raises(UnitUnreadable, match="cannot read"):
        parse_show("x.service", "LoadState=loaded\nRestart=always\nRestartUSec=soon\n")
