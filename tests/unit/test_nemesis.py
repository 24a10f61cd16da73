"""The Nemesis without a cluster: what it records and reports around a fault."""

from harness.history import History


def test_nemesis_labels_and_steps_name_the_fault_and_its_target(fake):
    """The report's fault/component labels and steps come from the Nemesis (no cluster needed to see it)."""
    from harness.faults import Bandwidth, Nemesis

    cluster = fake
    labels, steps = [], []

    class Step:
        def __init__(self, title):
            steps.append(title)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    nemesis = Nemesis(cluster, History(), step=Step, label=lambda name, value: labels.append((name, value)))
    with nemesis.fault(Bandwidth(host="c2", rate_mbit=10)):
        assert fake.model()["hosts"]["c2"]["link"][0] == "tbf 10"
    assert ("fault", "bandwidth") in labels and ("component", "c2") in labels
    assert steps[0].startswith("inject bandwidth(host=c2") and steps[1].startswith("heal ")
    assert [e.type for e in nemesis.history.events_of()] == ["fault.start", "fault.in_place", "fault.end"]


def test_a_fault_naming_an_unknown_host_is_refused_before_anything_is_journaled(fake):
    import pytest

    from harness.errors import FaultError
    from harness.faults import Nemesis, Partition

    with pytest.raises(FaultError, match=r"no hosts \['c9'\]; hosts: lb, c1, c2, c3") as caught:
        Nemesis(fake, History()).inject(Partition(side_a=["c9"], side_b=["c1"]))
    assert "quorum status" in caught.value.fix
    journal = fake.run_dir / "faults.jsonl"
    assert not journal.exists() or not journal.read_text().strip()
    assert fake.health.problems() == []
