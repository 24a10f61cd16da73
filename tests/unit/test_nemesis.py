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


def test_a_fault_naming_an_unknown_host_is_refused_before_anything_is_journaled(tmp_path):
    from pathlib import Path
    from types import SimpleNamespace

    import pytest

    from harness.errors import FaultError
    from harness.faults import Nemesis, Partition
    from harness.topology import load_topology

    topology = load_topology(Path(__file__).resolve().parents[2] / "clusters" / "ha3.yaml")
    cluster = SimpleNamespace(run_dir=tmp_path, name="t", topology=topology)
    with pytest.raises(FaultError, match="no host named 'c9'; hosts: .*c1") as caught:
        Nemesis(cluster, History()).inject(Partition(side_a=["c9"], side_b=["c1"]))
    assert "quorum status" in caught.value.fix
    assert not (tmp_path / "faults.jsonl").exists() or not (tmp_path / "faults.jsonl").read_text().strip()
