"""Every registered backend implements the whole target protocol, and passes the same conformance checks
(tests/protocol_checks.py): here on the fake target, and on a real cluster of each other backend in the integration
test named for it."""

import inspect
from pathlib import Path

import pytest

from harness.backends import registry
from harness.target.protocol import Target
from tests.protocol_checks import check_target

INTEGRATION = Path(__file__).resolve().parents[1] / "integration"


@pytest.mark.parametrize("name", list(registry.BACKENDS))
def test_a_registered_backend_implements_every_method_of_the_protocol(name):
    backend = registry.get(name)
    assert backend.name == name
    assert issubclass(backend.target_class, Target) and not inspect.isabstract(backend.target_class), \
        getattr(backend.target_class, "__abstractmethods__", None)
    assert backend.capabilities == backend.target_class.capabilities()
    assert backend.public == (name in registry.public_names())


def test_the_fake_target_passes_the_conformance_checks(fake):
    check_target(fake, shell=False)  # the fake models echo and false; it runs no shell


@pytest.mark.parametrize("name", [name for name in registry.BACKENDS if name != "fake"])
def test_each_real_backend_runs_the_conformance_checks_on_a_cluster_of_its_own(name):
    test = f"def test_the_target_protocol_holds_on_{name}("
    holders = [path.name for path in INTEGRATION.glob("test_*.py") if test in path.read_text()]
    assert len(holders) == 1, f"no integration test {test}...) runs tests/protocol_checks.py on a {name} cluster"


def test_the_capability_table_in_docs_design_says_what_each_backend_offers():
    from harness.target.capabilities import Capability

    text = (Path(__file__).resolve().parents[2] / "docs" / "design.md").read_text()
    header = next(line for line in text.splitlines() if line.startswith("| capability | what it means |"))
    names = [cell.strip() for cell in header.strip("|").split("|")[2:]]
    assert sorted(names) == sorted(registry.BACKENDS)
    for capability in Capability:
        row = next(line for line in text.splitlines() if line.startswith(f"| `{capability.value}` |"))
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[1] == capability.meaning
        assert {n for n, cell in zip(names, cells[2:]) if cell == "yes"} == \
            {n for n in names if capability in registry.get(n).capabilities}, capability


def test_the_health_check_waits_out_one_missed_answer_and_fails_on_a_lasting_problem(fake, monkeypatch):
    from tests.protocol_checks import check_health

    looks = iter([["etcd@c1 unhealthy"]])
    healthy = type(fake.health).problems
    monkeypatch.setattr(type(fake.health), "problems", lambda self: next(looks, None) or healthy(self))
    check_health(fake)  # the second look is healthy
    monkeypatch.setattr(type(fake.health), "problems", lambda self: ["etcd@c1 unhealthy"])
    with pytest.raises(AssertionError, match="etcd@c1 unhealthy"):
        check_health(fake)


def _scripted(fake, looks: list[list[str]]) -> list[list[str]]:
    """The fake target's health looks replaced by `looks`, one per call (the last repeats); returns the seen list."""
    seen: list[list[str]] = []

    def problems() -> list[str]:
        seen.append(looks[min(len(seen), len(looks) - 1)])
        return seen[-1]
    fake.health.problems = problems  # type: ignore[method-assign]
    return seen


def test_a_wait_for_two_clean_looks_waits_out_a_component_that_exits_just_after_the_first(fake):
    seen = _scripted(fake, [["etcd@c1 unhealthy"], [], ["kube-controller-manager@c1 unhealthy"], [], []])
    assert fake.health.problems_after(5.0, clean_looks=2) == []
    assert len(seen) == 5  # one clean look alone (the second) did not end the wait
    seen = _scripted(fake, [["etcd@c1 unhealthy"], [], ["kube-controller-manager@c1 unhealthy"]])
    assert fake.health.problems_after(5.0) == []  # one clean look is enough by default
    assert len(seen) == 2


def test_a_wait_that_runs_out_returns_what_the_last_look_saw(fake):
    _scripted(fake, [[], ["kube-scheduler@c2 unhealthy"]])
    assert fake.health.problems_after(0.05, clean_looks=2) == ["kube-scheduler@c2 unhealthy"]
