"""`quorum gate`: judge a run's results by a policy, print the table, write gate.json and gate-junit.xml beside the
results, and exit 0 (promote), 1 (block) or 2 (cannot judge). Whatever goes wrong in the gate itself is 2, never 1:
a broken gate must not read as a blocked promotion, nor as a promotion."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from harness.errors import QuorumError
from harness.gate.evaluate import Decision, GateResult, evaluate, figures_of
from harness.gate.policy import Policy
from harness.gate.store import earlier_figures, promoted, remember, write_new
from harness.report.results import load_cluster, load_results, load_run

COLOURS = {"ok": "green", "block": "red", "unjudged": "yellow", "known failure": "blue", "not judged": "cyan",
           "sample": "white"}


class CannotJudge(QuorumError):
    """The gate cannot reach a decision on these results."""


def newest_results(histories: Path = Path("reports/histories")) -> Path:
    runs = sorted((d for d in histories.glob("*") if d.is_dir()), key=lambda d: d.stat().st_mtime)
    if not runs:
        raise CannotJudge(f"no results under {histories}/", "run `pytest scenarios/` first, or give --results DIR")
    return runs[-1]  # the newest run, even one that died before its junit.xml: never an older run instead


def judge(policy_path: Path, results: Path | None, baseline: Path | None,
          store: Path | None) -> tuple[GateResult, Path]:
    """The decision and the results directory it is about; CannotJudge (or another QuorumError) if there is none."""
    policy = Policy.load(policy_path)
    results = results or newest_results()
    found = load_results(results)
    run = load_run(results)
    if baseline is not None:
        earlier, named = figures_of(load_results(baseline)), f"{baseline} (--baseline)"
    else:
        kept = [p for p in promoted(store) if run is None or p.run_id != run.run_id] if store else []
        earlier = earlier_figures(kept)
        named = f"{len(kept)} promoted run(s) in {store}, the newest {kept[-1].directory_name}" if kept else ""
    verdict = evaluate(policy, found, run, earlier)
    verdict.baseline = named
    verdict.cluster = load_cluster(results)
    if store is not None and run is not None and verdict.decision is Decision.PROMOTE:
        remember(store, run, results, found, verdict)
    return verdict, results


def print_table(console: Console, verdict: GateResult, results: Path) -> None:
    judged = verdict.cluster
    on = f" on {judged.get('target') or judged.get('cluster')} ({judged.get('api_endpoint', '?')}, Kubernetes " \
         f"{judged.get('kubernetes', '?')}, etcd {judged.get('etcd', '?')})" if judged else ""
    table = Table("suite", "scenario", "outcome", "measure", "figure", "objective", "configuration", "verdict",
                  "reason", title=escape(f"gate: {results}{on}"))
    for row in verdict.rows:  # scenario ids such as test_x[kube-scheduler] must not be read as markup
        table.add_row(escape(row.suite), escape(row.scenario if not row.measure else ""), row.outcome if not row.measure
                      else "", escape(row.measure), row.figure, row.objective, row.bound,
                      f"[{COLOURS[row.verdict]}]{row.verdict}[/]", escape(row.reason[:120]))
    console.print(table)
    if verdict.not_judged:
        console.print(f"not judged ({len(verdict.not_judged)}):", highlight=False, markup=False)
        for item in verdict.not_judged:
            console.print(f"  - {item['suite']}: {item['what']}: {item['why']}", highlight=False, markup=False)
    for reason in verdict.reasons:
        console.print(f"  - {reason}", highlight=False, markup=False)
    for note in verdict.notes:
        console.print(f"note: {note}", highlight=False, markup=False)
    compared = f"compared with {verdict.baseline}" if verdict.baseline else "no earlier promoted run to compare with"
    console.print(f"decision: {verdict.decision.name.lower()}; {compared} (gate.json and gate-junit.xml in {results})",
                  highlight=False, markup=False)


def run(policy_path: Path, results: Path | None, baseline: Path | None, store: Path | None, console: Console,
        errors: Console) -> int:
    """The whole command; its exit code."""
    try:
        verdict, results = judge(policy_path, results, baseline, store)
        print_table(console, verdict, results)
        write_new(results / "gate.json", verdict.to_json())
        write_new(results / "gate-junit.xml", verdict.to_junit())
    except QuorumError as error:
        errors.print(f"cannot judge: {error.problem}\nfix: {error.fix}", highlight=False, markup=False)
        return Decision.UNJUDGED.value
    except Exception as error:  # noqa: BLE001 - whatever breaks, the gate must not read as "block" (exit 1)
        errors.print(f"cannot judge: the gate itself failed: {type(error).__name__}: {error}\nfix: check the "
                     "results directory (it must be a directory Quorum wrote, writable, gate.json a file); report "
                     "anything else as a Quorum bug", highlight=False, markup=False)
        return Decision.UNJUDGED.value
    return verdict.decision.value
