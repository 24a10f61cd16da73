"""A twin case marked deep says why: a process twin CI runs fails the same scenarios. A twin proven on a cluster built
for more than the twin (PROVEN_ELSEWHERE) is never built alone, and its test plants the twin file's own defects and
fails the same scenarios for the same reason. Checked here from the selections themselves
(pytest's collection), so a DEEP entry cannot claim a cover that is not there. Which tier proves each verdict is
tests/unit/test_tiers.py's rule."""

from functools import cache
from pathlib import Path

import pytest

from harness.backends.kind.topology import is_kind_topology
from tests.collect import collect_only, node_ids
from tests.integration.test_defect_twins import (BUILT_ALONE, CASES, CONFORMANCE, CONFORMANCE_DEEP,
                                                 CONFORMANCE_ONLY, DEEP, DOCKER_CASES, DOCKER_COVERED_BY,
                                                 PROVEN_ELSEWHERE, case_id)

ROOT = Path(__file__).resolve().parents[2]


@cache  # one collection per selection: several deep cases read the same process twins' (a pytest run each, ~3 s)
def selected(suite: str, select) -> frozenset[str]:
    """The scenario node ids a twin case runs."""
    if isinstance(select, tuple):
        return frozenset(name if "::" in name else f"{suite}::{name}" for name in select)
    out = collect_only(suite, "-k", select)
    ids = frozenset(node_ids(out))
    assert ids, f"{suite} -k {select!r} selects nothing:\n{out.stdout[-1500:]}{out.stderr[-1500:]}"
    return ids


@pytest.mark.parametrize("deep_case", sorted(DEEP))
def test_a_deep_twin_case_is_covered_by_process_twins_that_ci_runs(deep_case):
    cases = {case_id(twin, suite): (twin, suite, select) for twin, suite, select, _ in CASES}
    assert deep_case in cases, f"DEEP names no case: {deep_case}"
    _, suite, select = cases[deep_case]
    covered = set()
    for case, (twin, other_suite, other_select) in cases.items():
        if case not in DEEP and other_suite == suite and not is_kind_topology(ROOT / "clusters/defects" / f"{twin}.yaml"):
            covered |= selected(other_suite, other_select)
    missing = selected(suite, select) - covered
    assert not missing, f"{deep_case} is deep, but no process twin that CI runs fails {sorted(missing)}"


@cache  # one collection for every case
def collected(nodes: tuple[str, ...]) -> str:
    """pytest's list of the node ids among `nodes` that it collects, and its errors."""
    out = collect_only(*nodes)
    return out.stdout + out.stderr


@pytest.mark.parametrize("deep_case", sorted(PROVEN_ELSEWHERE))
def test_a_deep_twin_case_proven_elsewhere_names_a_test_that_reads_its_reason(deep_case):
    assert deep_case not in DEEP and deep_case not in {case_id(c[0], c[1]) for c in BUILT_ALONE}, \
        f"{deep_case} is proven elsewhere and built alone too: a tier would prove it twice"
    node = PROVEN_ELSEWHERE[deep_case]
    out = collected(tuple(sorted(set(PROVEN_ELSEWHERE.values()))))
    assert node in out.splitlines(), f"{node} is not a test pytest collects:\n{out[-1500:]}"
    source = (ROOT / node.partition("::")[0]).read_text()
    name, _, param = node.partition("::")[2].partition("[")
    start = source.index(f"def {name}(")
    body = source[start:].split("\ndef ")[0]
    decorators = source[:start].rsplit("\n\n", 1)[-1]
    # the reason read from CASES, in the test or through its module's _reason(twin), which reads CASES; a test
    # parametrized over twins reads it for its parameter
    reads_cases = "def _reason(" in source and "for name, _, _, reason in CASES if name == twin" in source
    parametrized = (param == f"{deep_case}]" and f'"{deep_case}"' in decorators and '"twin"' in decorators
                    and "_reason(twin)" in body)
    # or hands its twin's name to a helper of its module that reads the reason for it
    helped = f'"{deep_case}"' in body and "_reason(twin)" in source
    assert f'twin == "{deep_case}"' in body or (reads_cases and (f'_reason("{deep_case}")' in body or parametrized
                                                                  or helped)), \
        f"{node} does not read {deep_case}'s reason from CASES"
    # and plants what the twin's file says: read from clusters/defects/, in the test or in a helper it calls with
    # the twin's name
    reads_file = '"defects"' in source and (f'"{deep_case}"' in body or f"{deep_case}.yaml" in source)
    assert reads_file, f"{node} does not read {deep_case}'s defects from its file in clusters/defects/"


@pytest.mark.parametrize("deep_twin", sorted(CONFORMANCE_DEEP))
def test_a_deep_conformance_twins_checks_each_fail_on_a_process_twin_that_ci_runs(deep_twin):
    assert deep_twin in CONFORMANCE_ONLY, f"{deep_twin} is not a conformance-only twin"
    in_ci = [twin for twin in CONFORMANCE if twin not in CONFORMANCE_DEEP
             and not is_kind_topology(ROOT / "clusters/defects" / f"{twin}.yaml")]
    covered = set().union(*(CONFORMANCE[twin] for twin in in_ci))
    # the checks of the nodes (scenarios/conformance/test_nodes.py) skip on every process topology, which has no
    # nodes: a kind twin is their only failure proof, which may be deep as any proof may
    missing = CONFORMANCE[deep_twin] - covered - node_checks()
    assert not missing, f"{deep_twin} is deep, but no process twin that CI runs fails {sorted(missing)}"


@cache
def node_checks() -> frozenset[str]:
    return frozenset(name.split("::")[-1] for name in node_ids(collect_only("scenarios/conformance/test_nodes.py")))


def test_the_checks_of_the_nodes_are_what_the_deep_kind_twins_fail():
    """The exception above covers exactly the node checks, and each fails on a kind twin."""
    assert node_checks() == {"test_kube_proxy_serves_its_metrics_to_the_other_hosts",
                           "test_control_plane_pods_run_at_system_priority_with_a_small_cpu_request",
                           "test_control_plane_nodes_are_labelled_for_their_role_and_tainted_against_workloads"}
    assert node_checks() <= set().union(*(CONFORMANCE[twin] for twin in CONFORMANCE_DEEP))


@pytest.mark.parametrize("twin", sorted(DOCKER_COVERED_BY))
def test_a_process_twin_not_built_on_docker_has_every_scenario_failed_there_by_the_twin_it_names(twin):
    cover = DOCKER_COVERED_BY[twin]
    built = [case for case in DOCKER_CASES if case[0] == cover]
    assert built, f"{twin} names {cover}, which the docker backend does not build either"
    assert not any(case[0] == twin for case in DOCKER_CASES), f"{twin} is built on docker all the same"
    left_out = set().union(*(selected(suite, select) for name, suite, select, _ in CASES if name == twin))
    # its suites' scenarios, and on the same build the conformance checks it fails (CONFORMANCE)
    failed_there = set().union(*(selected(suite, select) for _, suite, select, _ in built)) | {
        node for node in conformance_ids() if node.split("::")[-1] in CONFORMANCE.get(cover, set())}
    assert left_out and left_out <= failed_there, \
        f"{cover} on docker does not fail {sorted(left_out - failed_there)}, which {twin} fails on the process backend"


@cache
def conformance_ids() -> frozenset[str]:
    return frozenset(node_ids(collect_only("scenarios/conformance")))
