"""The harness side of a load run: worker processes started and bounded (locust workers for the mix, one plain
reader for its rate-only reads: harness/load/reader.py), their requests put into the History as operations
(f="load.<verb>", target=<resource>, extra scope and HTTP status)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import requests

from harness.history import History, Op, Outcome
from harness.load import records as reader_records
from harness.load.spec import LOAD_NAMESPACE, NODE_TASKS, TARGET_MIX, LoadSpec, parse_spec
from harness.shell import python_environment
from harness.target.protocol import Target

STOP_GRACE_S = 15.0
READER_PREFIX = "reads-"  # a plain reader's name: its records are binary (harness/load/records.py)


@dataclass(frozen=True)
class LoadSummary:
    requests: int
    failures: int
    rps: float  # achieved, over all processes
    rps_per_process: float
    processes: int  # locust workers and plain readers
    readers: int = 0  # of them plain readers


def spec_for(cluster: Target, **settings) -> LoadSpec:
    """A load spec for this cluster: its endpoint, the load's identity and its hollow nodes; on a cluster without
    hollow nodes its real nodes, read only, and TARGET_MIX."""
    ca, client = cluster.load_credentials()
    nodes = cluster.hollow_nodes()
    if not nodes:
        response = cluster.api.request("GET", "/api/v1/nodes?limit=500", timeout=30.0)
        response.raise_for_status()
        nodes = [n["metadata"]["name"] for n in response.json().get("items", [])]
        settings.setdefault("mix", {task: weight for task, weight in TARGET_MIX.items()
                                    if nodes or task not in NODE_TASKS})  # a cluster with no Node objects at all
        settings.setdefault("pods_namespace", LOAD_NAMESPACE)
    settings.setdefault("processes", min(os.cpu_count() or 1, 2))
    return parse_spec({"endpoint": cluster.api_endpoint, "ca": ca, "cert": client.cert, "key": client.key,
                       "nodes": nodes, **settings})


class LoadGenerator:
    def __init__(self, cluster: Target, history: History, spec: LoadSpec, work_dir: Path) -> None:
        if spec.processes > (os.cpu_count() or 1):
            from harness.load.spec import LoadSpecError

            raise LoadSpecError(f"{spec.processes} load processes on {os.cpu_count()} cores",
                                "use at most one process per core (processes: N)")
        self.cluster, self.history, self.spec = cluster, history, spec
        self.work_dir = work_dir
        self.processes: list[subprocess.Popen] = []
        self.names: list[str] = []  # each process's name: its files' stem and its operations' process in the History
        self.summary: LoadSummary | None = None
        self.started_at: float | None = None

    def _files(self, name: str) -> tuple[Path, Path, Path]:
        records = f"{name}.records" if name.startswith(READER_PREFIX) else f"{name}.jsonl"
        return self.work_dir / f"{name}.spec.json", self.work_dir / records, self.work_dir / f"{name}.summary.json"

    def _start(self, name: str, module: str, spec: LoadSpec) -> None:
        spec_file, records, summary = self._files(name)
        spec_file.write_text(spec.model_dump_json())
        for stale in (records, summary):
            stale.unlink(missing_ok=True)
        with open(self.work_dir / f"{name}.log", "ab") as log:
            self.processes.append(subprocess.Popen(
                [sys.executable, "-m", module, str(spec_file), str(records), str(summary)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=python_environment()))
        self.names.append(name)

    def start(self) -> "LoadGenerator":
        self.cluster.ensure_local()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        _ensure_namespace(self.cluster)
        self.history.event("load.start", users=self.spec.users, rate_per_s=self.spec.rate_per_s,
                           duration_s=self.spec.duration_s, processes=self.spec.processes)
        self.started_at = time.monotonic()
        reads, rest = self.spec.split()
        if reads is not None:
            self._start(f"{READER_PREFIX}0", "harness.load.reader", reads)
        for index in range(rest.processes if rest is not None else 0):
            self._start(f"load-{index}", "harness.load.worker", rest.share(index))
        return self

    def wait(self) -> LoadSummary:
        """Until the run's duration is over (plus grace), then stop whatever still runs."""
        deadline = (self.started_at or time.monotonic()) + self.spec.duration_s + STOP_GRACE_S + self.spec.request_timeout_s
        for process in self.processes:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        return self.stop()

    def stop(self) -> LoadSummary:
        if self.summary is not None:
            return self.summary
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.summary = self._collect()
        _remove_leftovers(self.cluster)
        self.history.event("load.end", requests=self.summary.requests, failures=self.summary.failures,
                           rps=round(self.summary.rps, 2))
        return self.summary

    def _collect(self) -> LoadSummary:
        requests_, failures = 0, 0
        rps = 0.0
        for name in self.names:
            _, records, summary = self._files(name)
            if records.exists():
                count, failed = import_records(self.history, records, name)
                requests_ += count
                failures += failed
            if summary.exists():
                rps += json.loads(summary.read_text()).get("rps", 0.0)
        count = max(len(self.processes), 1)
        return LoadSummary(requests_, failures, rps, rps / count, len(self.processes),
                           sum(name.startswith(READER_PREFIX) for name in self.names))

    def __enter__(self) -> "LoadGenerator":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def import_records(history: History, records: Path, process: str) -> tuple[int, int]:
    """A worker's request records (JSON lines) or a plain reader's (`.records`, binary) into a History as operations;
    (requests, failed). Also how a distributed locust run's records are judged offline."""
    count = failed = 0
    read = reader_records.read(records.read_bytes()) if records.suffix == ".records" else _json_records(records)
    for r in read:
        history.add_op(Op(process, f"load.{r.verb}", r.resource, r.t0, r.t1, Outcome.OK if r.ok else Outcome.FAIL,
                          error=r.error, extra={"scope": r.scope, "status": r.status}))
        count += 1
        failed += 0 if r.ok else 1
    return count, failed


def _json_records(path: Path) -> Iterator[reader_records.Record]:
    """A locust worker's records, one JSON line each (harness/load/users.py)."""
    for line in path.read_text().splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line torn by a killed worker
        yield reader_records.Record(r["t0"], r["t1"], r["verb"], r["resource"], r["scope"], r["ok"], r["status"],
                                    r["error"])


def _remove_leftovers(cluster: Target) -> None:
    """The objects the users still owned when the run ended (each keeps a few alive), so runs do not pile up."""
    for kind in ("configmaps", "pods"):
        try:
            cluster.api.request("DELETE", f"/api/v1/namespaces/{LOAD_NAMESPACE}/{kind}?labelSelector=app%3Dquorum-load"
                                          "&gracePeriodSeconds=0", timeout=30.0)
        except requests.RequestException:
            pass  # best effort: the next run's objects have other names, and `quorum down` removes everything


def _ensure_namespace(cluster: Target) -> None:
    from harness.load.hollow import ensure_namespace

    ensure_namespace(cluster.api, LOAD_NAMESPACE)
