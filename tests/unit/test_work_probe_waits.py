"""How a work check waits for its samples (harness/monitors/work_probes.py): it stops waiting once a probe in flight
has waited past its bound, since work-done fails on that wait whatever comes after."""

from kubernetes import client as k8s

from harness.history import History
from harness.monitors import work_probes
from harness.monitors.work_probes import WorkProbes
from tests.unit.conftest import fake_target


class NeverDone(WorkProbes):
    """Probes whose work is never done, asked of nobody: only the waiting is exercised (no namespace is created)."""

    name = "never"
    probes = ("work.never",)

    def __init__(self, cluster, history: History) -> None:
        super().__init__(cluster, history, rate=10.0, workers=1, deadline_s=20.0)

    def setup(self) -> None:
        pass

    def finish(self) -> None:
        pass

    def step(self, worker: int) -> None:
        self._probe("work.never", "n-1", lambda: None, lambda: False, "never")


def test_the_wait_ends_once_a_probe_in_flight_has_waited_past_its_bound(tmp_path, monkeypatch):
    """The first probe is still in flight when the wait returns: a wait that ran on to its timeout would have seen
    that probe's deadline pass and its record written."""
    monkeypatch.setattr(work_probes, "api_client", lambda cluster: k8s.ApiClient())  # never used: nothing is asked
    history = History()
    monitor = NeverDone(fake_target(tmp_path), history).start()
    try:
        sampled = monitor.wait_for_samples(3, timeout_s=60.0, late_after_s={"work.never": 0.5})
        assert not sampled and monitor.waiting_past({"work.never": 0.5})
        assert not history.ops_of("work.never"), "the wait ran past the first probe's deadline"
        assert not monitor.waiting_past({"work.other": 0.5}) and not monitor.waiting_past({"work.never": 600.0})
    finally:
        monitor.stop()
    probe = history.ops_of("work.never")[0]
    assert probe.extra.get("pending") and probe.complete - probe.invoke > 0.5  # work-done reads this wait as late
