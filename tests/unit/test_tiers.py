"""The tier rule (tests/tiers.py, docs/ci.md): every verdict, a scenario on a backend that claims it, has a pass proof
and a failure proof in presubmit or in the deep tier, never in neither; every twin is run by a test in a tier.

The verdicts no test proves yet are tests/known_gaps.py's KNOWN_GAPS, each with why and the issue that closes it. The
register only shrinks: a gap that is not in it fails, and so does an entry that names a verdict some test now proves
(narrow it)."""

from __future__ import annotations

import json

import pytest

from tests.collect import collect_only, node_ids
from tests.known_gaps import KNOWN_GAPS
from tests.tiers import CI_DOC, Ledger, generated, ledger_from_a_child


@pytest.fixture(scope="module")
def ledger() -> Ledger:
    return ledger_from_a_child()


def test_every_verdict_is_proven_both_ways_in_a_tier_or_is_a_known_gap(ledger):
    unknown = [gap for gap in ledger.gaps() if not any(known.covers(*gap) for known in KNOWN_GAPS)]
    assert not unknown, "verdicts with no proof of one outcome in either tier (add a test with its proof marker, " \
                        "tests/tiers.py):\n" + "\n".join(f"{s} on {b}: nothing proves it {o}" for s, b, o in unknown)


def test_the_known_gaps_name_only_verdicts_that_are_still_unproven(ledger):
    gaps = ledger.gaps()
    proven = [(scenario.id, backend, outcome) for scenario in ledger.scenarios for backend in scenario.claimed_by
              for outcome in ("passes", "fails") if (scenario.id, backend, outcome) not in gaps]
    for known in KNOWN_GAPS:
        assert any(known.covers(*gap) for gap in gaps), f"nothing left of this known gap: remove it: {known}"
        closed = [verdict for verdict in proven if known.covers(*verdict)]
        assert not closed, f"a known gap names verdicts a test now proves: narrow it: {known}\n{closed}"


def test_every_twin_is_run_by_a_test_in_a_tier(ledger):
    assert ledger.twins and not ledger.unproven_twins(), \
        f"twins in clusters/defects/ that no test with a proof marker runs: {ledger.unproven_twins()}"


def test_every_scenario_is_claimed_by_a_backend(ledger):
    unclaimed = [scenario.id for scenario in ledger.scenarios if not scenario.claimed_by]
    assert not unclaimed, f"scenarios no backend can run (their requires): {unclaimed}"


def test_docs_ci_md_holds_the_ledgers_table(ledger):
    assert generated(ledger) in CI_DOC.read_text(), \
        "docs/ci.md's tier table is stale: run `python -m tests.tiers --write`"


def test_a_twin_whose_test_loses_its_proof_marker_leaves_its_twin_and_its_verdicts_unproven(ledger):
    """The rule fails as it should: the ledger without one presubmit twin's proofs (its test's marker removed)."""
    twin = "rotation-ca-first"
    assert any(proof["twin"] == twin and proof["tier"] == "presubmit" for proof in ledger.proofs)
    stripped = Ledger(ledger.scenarios, [proof for proof in ledger.proofs if proof["twin"] != twin], ledger.twins)
    assert stripped.unproven_twins() == [twin]
    lost = set(stripped.gaps()) - set(ledger.gaps())
    rotation = "scenarios/lifecycle/test_cert_rotation.py::test_every_peer_and_serving_certificate_is_rotated_one_host_at_a_time_without_an_outage"
    assert (rotation, "process", "fails") in lost, sorted(lost)


def test_a_proof_moved_to_the_deep_tier_is_counted_there(ledger):
    main_job = next(proof for proof in ledger.proofs if proof["test"].endswith(
        "test_every_suite_but_the_measuring_ones_passes_on_the_default_topology_and_the_gate_promotes_it"))
    scenario = main_job["scenarios"][0]
    assert "presubmit" in ledger.proven(scenario, "process", "passes")
    moved = Ledger(ledger.scenarios, [dict(proof, tier="deep") if proof is main_job else proof
                                      for proof in ledger.proofs], ledger.twins)
    assert "deep" in moved.proven(scenario, "process", "passes")


@pytest.mark.parametrize("test", ["test_every_suite_but_the_measuring_ones_passes_on_the_default_topology_and_the_gate_"
                                  "promotes_it", "test_the_suite_fails_on_its_broken_twin[no-leader-election]"])
def test_the_ledger_selects_what_pytest_selects(ledger, test):
    """tests/tiers.py evaluates a selection with pytest's own matchers; a pytest run of its arguments collects the
    same scenarios."""
    proof = next(proof for proof in ledger.proofs if proof["test"].endswith(test) and "--ignore=scenarios/load" in
                 proof["selection"] or "-k" in proof["selection"] and proof["test"].endswith(test))
    collected = [nodeid for nodeid in node_ids(collect_only(*proof["selection"])) if nodeid.startswith("scenarios/")]
    assert sorted(collected) == sorted(proof["scenarios"]), json.dumps(proof, indent=1)


def test_a_tests_worth_counts_only_what_no_other_test_proves_and_the_pairs_it_completes():
    """Ledger.worth on a hand-made ledger: a second pass proof adds nothing; a failure proof no other test makes
    completes a pair where a pass exists and only a unique proof where none does; a twin run by one test is named."""
    from tests.tiers import Scenario, Worth

    a = Scenario("scenarios/s/test_a.py::test_a", "test_a", [], True, False, ["process", "docker"])
    b = Scenario("scenarios/s/test_b.py::test_b", "test_b", [], True, False, ["process"])

    def proof(test, outcome, backend, scenarios, twin=None, tier="deep"):
        return {"test": test, "outcome": outcome, "backend": backend, "scenarios": scenarios, "twin": twin,
                "tier": tier}

    ledger = Ledger([a, b], [
        proof("main", "passes", "process", [a.id, b.id], tier="presubmit"),
        proof("again", "passes", "process", [a.id]),  # a second pass of a on process: nothing new
        proof("twin-a", "fails", "process", [a.id], twin="broken-a"),  # completes a's pair on process
        proof("twin-a-docker", "fails", "docker", [a.id], twin="broken-a"),  # unique, but no docker pass of a
        proof("twin-b", "fails", "process", [b.id], twin="broken-b"),
        proof("twin-b-too", "fails", "process", [b.id], twin="broken-b"),  # b's failure proven twice
    ], ["broken-a", "broken-b"])
    worth = {w.test: w for w in ledger.worth()}
    assert worth["again"] == Worth("again", "deep", 0, 0, ())
    assert worth["twin-a"] == Worth("twin-a", "deep", 1, 1, ())
    assert worth["twin-a-docker"] == Worth("twin-a-docker", "deep", 1, 0, ())
    assert worth["twin-b"] == Worth("twin-b", "deep", 0, 0, ())
    assert worth["main"] == Worth("main", "presubmit", 1, 1, ())  # b's pass: a's is proven by "again" too
    lone = Ledger([a, b], [p for p in ledger.proofs if p["test"] != "twin-b-too"], ledger.twins)
    assert {w.test: w for w in lone.worth()}["twin-b"] == Worth("twin-b", "deep", 1, 1, ("broken-b",))
