"""How often a healthy cluster passes: run suites again and again on one cluster and count.

    python bench/repeat.py scenarios/etcd scenarios/leader_election scenarios/self_healing --backend kind --runs 20

Each run is `pytest <suites> --backend B --keep-cluster` on the same cluster (the plugin's guard repairs it between
scenarios, as it does for users). Every run's outcomes, failure reasons and figures are kept in
bench/results/repeat-<label>-runs.json and added to those of earlier invocations with the same suites and backend
(so nightly runs add up to the 20; `--fresh` starts over); the table in docs/benchmarks.md counts them all: runs,
failures with their reasons, the spread of each measured figure. Goal: no failure in 20 runs of each scenario on
each backend; a false alarm is a gate that gets switched off.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import RESULTS, ROOT, write_results  # noqa: E402

from harness.backends import registry  # noqa: E402
from harness.faults.signals import interrupt_on_signals  # noqa: E402
from harness.report.results import load_results  # noqa: E402


def numbers(value: object) -> list[float]:
    """The numbers in a History figure: itself, or the values of a per-host mapping or list (not booleans)."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [n for item in value for n in numbers(item)]
    return []


def spread(values: list[float]) -> str:
    if not values:
        return ""
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def one_run(histories: Path, attempt: int) -> dict:
    """What one pytest run recorded: each scenario's outcome, the reason of a failure, the figures measured."""
    run: dict = {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "outcomes": {}, "reasons": {}, "figures": {}}
    for scenario in load_results(histories):
        run["outcomes"][scenario.nodeid] = scenario.outcome
        if scenario.outcome in ("failed", "error"):
            run["reasons"][scenario.nodeid] = f"run {attempt}: {scenario.message[:200]}"
        figures = run["figures"].setdefault(scenario.nodeid, {})
        for measurement in scenario.measures:
            if measurement.value is not None:
                figures.setdefault(measurement.label, []).append(measurement.value)
        for name, value in scenario.figures.items():
            if name.endswith("_s"):  # the durations a scenario reports beside its measures
                figures.setdefault(name, []).extend(numbers(value))
    return run


def table(runs: list[dict]) -> list[dict]:
    outcomes: dict[str, list[str]] = defaultdict(list)
    reasons: dict[str, list[str]] = defaultdict(list)
    figures: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        for nodeid, outcome in run["outcomes"].items():
            outcomes[nodeid].append(outcome)
        for nodeid, reason in run["reasons"].items():
            reasons[nodeid].append(reason)
        for nodeid, measured in run["figures"].items():
            if run["outcomes"].get(nodeid) == "skipped":
                continue
            for name, values in measured.items():
                figures[nodeid][name] += values
    rows = []
    for nodeid, seen in sorted(outcomes.items()):
        ran = [o for o in seen if o != "skipped"]
        if not ran:
            continue
        failed = [o for o in ran if o in ("failed", "error")]
        rows.append({"scenario": nodeid.split("::", 1)[1], "runs": len(ran), "failed": len(failed),
                     "figures": "; ".join(f"{k} {spread(v)}" for k, v in sorted(figures[nodeid].items()) if v),
                     "failures": " / ".join(reasons[nodeid])[:400]})
    return rows


def run_pytest(command: list[str], timeout_s: float = 4 * 3600) -> int:
    """One run's pytest. Stopped (a signal, Ctrl-C), the bench asks it to stop the same way and waits: its plugin
    heals the faults it injected before the bench takes the cluster down (SIGKILL would leave them)."""
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return child.wait(timeout=timeout_s)
    except BaseException:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=300)
        except subprocess.TimeoutExpired:
            child.kill()
        raise


def main() -> None:
    interrupt_on_signals()  # SIGTERM and SIGHUP unwind like Ctrl-C: the run's faults are healed, its cluster removed
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="+", help="scenario paths or node ids, e.g. scenarios/etcd")
    parser.add_argument("--backend", default="process", choices=registry.public_names())
    parser.add_argument("--topology", default=None)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--max-hours", type=float, default=6.0, help="stop starting runs after this long")
    parser.add_argument("--label", default=None, help="names the table (default: the backend), so repeating other "
                        "suites on the same backend adds a table instead of replacing one")
    parser.add_argument("--fresh", action="store_true", help="forget the runs recorded before under this label")
    parser.add_argument("--run-dir", type=Path, default=None,
                        help="a running cluster to use (and keep); by default one is built and removed after")
    args = parser.parse_args()
    if not 1 <= args.runs <= 200:
        parser.error("--runs must be between 1 and 200")
    label = args.label or args.backend  # names a file and a marker in docs/benchmarks.md: checked before any run
    if not label.replace("-", "").isalnum():
        parser.error("--label takes letters, digits and dashes")
    backend = registry.get(args.backend)
    topology = Path(args.topology or backend.default_topology)
    record = RESULTS / f"repeat-{label}-runs.json"
    what = {"backend": args.backend, "suites": args.suites}
    kept = json.loads(record.read_text()) if record.exists() and not args.fresh else {}
    if kept and {k: kept.get(k) for k in what} != what:
        parser.error(f"{record} holds runs of {kept.get('suites')} on {kept.get('backend')}: give another --label, "
                     "or --fresh to start over")
    runs: list[dict] = kept.get("runs", [])
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="quorum-repeat-") as scratch:
        run_dir = args.run_dir.resolve() if args.run_dir else Path(scratch) / "run"
        try:
            for attempt in range(1, args.runs + 1):
                if time.monotonic() - started > args.max_hours * 3600:
                    print(f"stopping after {attempt - 1} runs: --max-hours {args.max_hours}", flush=True)
                    break
                histories = Path(scratch) / f"histories-{attempt}"
                command = [sys.executable, "-m", "pytest", *args.suites, f"--backend={args.backend}",
                           f"--topology={topology}", "--keep-cluster", f"--run-dir={run_dir}",
                           f"--history-dir={histories}", "-p", "no:cacheprovider", "-q"]
                returncode = run_pytest(command)
                runs.append(one_run(histories, len(runs) + 1))
                record.parent.mkdir(parents=True, exist_ok=True)
                record.write_text(json.dumps({**what, "runs": runs}, indent=1))  # kept as it goes: a killed bench counts
                print(f"run {attempt}/{args.runs}: pytest exited {returncode}", flush=True)
        finally:
            if args.run_dir is None and (run_dir / "state.json").exists():
                registry.down(run_dir)
    write_results(f"repeat-{label}", table(runs), ["scenario", "runs", "failed", "figures", "failures"],
                  f"How often a healthy {args.backend} cluster passes ({len(runs)} runs of {' '.join(args.suites)})",
                  notes="figures: median (min-max) of each measured figure over the runs (docs/gate.md names them). "
                        "Runs add up across invocations (bench/results/repeat-<label>-runs.json holds each). "
                        "A failure on a healthy cluster is a false alarm: each is explained in the closing note of "
                        "the session that ran this, with its measured cause.",
                  script="repeat.py")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt as stop:
        raise SystemExit(f"stopped ({stop or 'Ctrl-C'}): the runs finished before are kept, the cluster is removed")
