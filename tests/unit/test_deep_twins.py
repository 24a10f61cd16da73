"""A twin case marked deep is skipped in CI because a case CI runs fails the same scenarios: checked here from the
selections themselves (pytest's collection), so a DEEP entry cannot claim a cover that is not there."""

import subprocess
import sys
from pathlib import Path

import pytest

from harness.backends.kind.topology import is_kind_topology
from tests.integration.test_defect_twins import CASES, DEEP, PROVEN_ELSEWHERE, case_id

ROOT = Path(__file__).resolve().parents[2]


def selected(suite: str, select, tmp_path: Path) -> set[str]:
    """The scenario node ids a twin case runs."""
    if isinstance(select, tuple):
        return {name if "::" in name else f"{suite}::{name}" for name in select}
    out = subprocess.run([sys.executable, "-m", "pytest", suite, "-k", select, "--collect-only", "-q",
                          "-p", "no:cacheprovider", "--history-dir", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    ids = {line.strip() for line in out.stdout.splitlines() if "::" in line}
    assert ids, f"{suite} -k {select!r} selects nothing:\n{out.stdout[-1500:]}{out.stderr[-1500:]}"
    return ids


@pytest.mark.parametrize("deep_case", sorted(set(DEEP) - set(PROVEN_ELSEWHERE)))
def test_a_deep_twin_case_is_covered_by_process_twins_that_ci_runs(deep_case, tmp_path):
    cases = {case_id(twin, suite): (twin, suite, select) for twin, suite, select, _ in CASES}
    assert deep_case in cases, f"DEEP names no case: {deep_case}"
    _, suite, select = cases[deep_case]
    covered = set()
    for case, (twin, other_suite, other_select) in cases.items():
        if case not in DEEP and other_suite == suite and not is_kind_topology(ROOT / "clusters/defects" / f"{twin}.yaml"):
            covered |= selected(other_suite, other_select, tmp_path)
    missing = selected(suite, select, tmp_path) - covered
    assert not missing, f"{deep_case} is deep, but no process twin that CI runs fails {sorted(missing)}"


@pytest.mark.parametrize("deep_case", sorted(PROVEN_ELSEWHERE))
def test_a_deep_twin_case_proven_elsewhere_names_a_ci_test_that_reads_its_reason(deep_case, tmp_path):
    assert deep_case in DEEP, f"{deep_case} is proven elsewhere but not deep: CI would run it twice"
    node = PROVEN_ELSEWHERE[deep_case]
    out = subprocess.run([sys.executable, "-m", "pytest", node, "--collect-only", "-q", "-m", "not deep",
                          "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert node in out.stdout, f"{node} is not a test CI collects:\n{out.stdout[-1500:]}{out.stderr[-1500:]}"
    source = (ROOT / node.partition("::")[0]).read_text()
    body = source[source.index(f"def {node.partition('::')[2]}("):]
    body = body.split("\ndef ")[0]
    # the reason read from CASES, in the test or through its module's _reason(twin), which reads CASES
    reads_cases = "def _reason(" in source and "for name, _, _, reason in CASES if name == twin" in source
    assert f'twin == "{deep_case}"' in body or (f'_reason("{deep_case}")' in body and reads_cases), \
        f"{node} does not read {deep_case}'s reason from CASES"
