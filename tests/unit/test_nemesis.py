"""The Nemesis without a cluster: what it records and reports around a fault."""

from harness.history import History


def test_nemesis_labels_and_steps_name_the_fault_and_its_target(tmp_path):
    """The report's fault/component labels and steps come from the Nemesis (no cluster needed to see it)."""
    from types import SimpleNamespace

    from harness.faults import Bandwidth, Nemesis

    class Recorded(Bandwidth):
        name = "recorded-bandwidth"

        def act(self, cluster):
            pass

        def undo(self, cluster):
            pass

    cluster = SimpleNamespace(run_dir=tmp_path, name="t", topology=SimpleNamespace(disposable=True))
    labels, steps = [], []

    class Step:
        def __init__(self, title):
            steps.append(title)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    nemesis = Nemesis(cluster, History(), step=Step, label=lambda name, value: labels.append((name, value)))
    with nemesis.fault(Recorded(host="c2", rate_mbit=10)):
        pass
    assert ("fault", "recorded-bandwidth") in labels and ("component", "c2") in labels
    assert steps[0].startswith("inject recorded-bandwidth(host=c2") and steps[1].startswith("heal ")
    assert [e.type for e in nemesis.history.events_of()] == ["fault.start", "fault.end"]
