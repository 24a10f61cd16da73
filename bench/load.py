"""Figures of the 1000-node load work (issue 7), written to bench/results/load*.json and docs/benchmarks.md.

    python bench/load.py ready [--counts 1000]        # time until N hollow nodes (and their pods) are Ready
    python bench/load.py usage [--seconds 30]         # CPU and memory of the cluster and the harness, 1000 nodes
    python bench/load.py capacity [--counts 1000 2000 3000]  # highest node count with the ci load within SLOs
    python bench/load.py rps [--seconds 30] [--rounds 3]  # locust, vegeta, a plain Python client, wrk: same endpoint

Each mode brings up its own cluster in a scratch run directory and takes it down again.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import write_results as _write_results  # noqa: E402

from harness.backends import registry  # noqa: E402
from harness.checkers.server_slo import server_latency_slo  # noqa: E402
from harness.checkers.slo import error_rate, heartbeat_health, latency_slo  # noqa: E402
from harness.faults.signals import interrupt_on_signals  # noqa: E402
from harness.history import History  # noqa: E402
from harness.load.generator import LoadGenerator, spec_for  # noqa: E402
from harness.load.scraped import ScrapedLoad  # noqa: E402
from harness.monitors.nodes import NodeReadiness  # noqa: E402
from harness.topology import Component  # noqa: E402

BASE = ROOT / "clusters" / "ha3-1000.yaml"
TICK = os.sysconf("SC_CLK_TCK")


def write_results(name: str, *args, **kwargs) -> None:
    _write_results(name, *args, script=f"load.py {name.removeprefix('load_')}", **kwargs)


def topology_with(count: int, scratch: Path) -> Path:
    data = yaml.safe_load(BASE.read_text())
    data["name"] = f"bench-{count}"
    hosts = [h for h in data["hosts"] if "nodes" not in h["roles"]]
    per = data["hollow_nodes"].get("per_controller_max", 2000)
    hosts += [{"name": f"n{i + 1}", "roles": ["nodes"]} for i in range(max(1, -(-count // min(per, 1500))))]
    data["hosts"] = hosts
    data["hollow_nodes"]["count"] = count
    path = scratch / f"bench-{count}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


class Cluster:
    def __init__(self, count: int) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="quorum-bench-"))
        self.topology = topology_with(count, self.scratch)
        self.run_dir = self.scratch / "run"

    def __enter__(self):
        started = time.monotonic()
        try:
            self.cluster = registry.get("process").up(self.topology, self.run_dir,
                                                      say=lambda line: print(line, flush=True))
            self.hollow = json.loads((self.run_dir / "hollow.json").read_text())
        except BaseException:  # a failed or interrupted build: nothing of it stays behind
            self.__exit__()
            raise
        self.up_s = time.monotonic() - started
        return self

    def __exit__(self, *exc) -> None:
        """The cluster down, and its scratch directory (keys and kubeconfigs among it) removed."""
        try:
            registry.down(self.run_dir)
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)


def ready(counts: list[int]) -> None:
    rows = []
    for count in counts:
        with Cluster(count) as c:
            rows.append({"nodes": count, "nodes_ready_s": round(c.hollow["nodes_ready_s"], 1),
                         "pods": c.hollow["pods"], "pods_running_s": round(c.hollow["pods_running_s"], 1),
                         "whole_up_s": round(c.up_s, 1), "goal": "nodes Ready <= 120 s",
                         "met": "yes" if c.hollow["nodes_ready_s"] <= 120 else "no"})
    write_results("load_ready", rows, ["nodes", "nodes_ready_s", "pods", "pods_running_s", "whole_up_s", "goal", "met"],
                  "Hollow nodes: time until Ready",
                  "Nodes are created at 50/s (hollow_nodes.create_rate_per_s), then the Deployment of one pod per "
                  "node. nodes_ready_s runs from the first create to every node Ready; whole_up_s includes the control "
                  "plane.")


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _rss_mib(pid: int) -> float:
    match = re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
    return int(match.group(1)) / 1024 if match else 0.0


# the harness: Quorum's own processes on the machine (kwok plays the kubelets, locust the clients; this Python
# process is where a scenario's monitors run); every other component is the cluster under test
HARNESS = (Component.KWOK,)


def _processes(cluster, generator: LoadGenerator | None) -> dict[str, tuple[str, int]]:
    """name -> (side, pid) for every component of the cluster, the load generator's workers and this process."""
    found = {f"{component.value}@{host}": ("harness" if component in HARNESS else "cluster", pid)
             for component in Component for host in cluster.component_hosts(component)
             if (pid := cluster.pid(component, host))}
    for name, worker in zip(generator.names, generator.processes) if generator else []:
        found[f"load generator {name}"] = ("harness", worker.pid)
    found["bench (monitors' process)"] = ("harness", os.getpid())
    return found


def _usage(processes: dict[str, tuple[str, int]], seconds: float) -> dict[str, tuple[float, float]]:
    before = {name: _cpu_ticks(pid) for name, (_, pid) in processes.items()}
    time.sleep(seconds)
    return {name: (100.0 * (_cpu_ticks(processes[name][1]) - ticks) / TICK / seconds, _rss_mib(processes[name][1]))
            for name, ticks in before.items()}


def _machine_pct(used: dict[str, tuple[float, float]], processes: dict[str, tuple[str, int]], side: str) -> float:
    """A side's CPU in % of the whole machine (every core), the figure the 15 % goal of issue #25 is about."""
    return sum(cpu for name, (cpu, _) in used.items() if processes[name][0] == side) / (os.cpu_count() or 1)


def usage(seconds: float) -> None:
    rows = []
    with Cluster(1000) as c:
        idle_processes = _processes(c.cluster, None)
        idle = _usage(idle_processes, seconds)
        history = History()
        spec = spec_for(c.cluster, users=10, rate_per_s=20, duration_s=seconds + 10)
        monitor = NodeReadiness(c.cluster, history).start()  # as the load suite's steady scenario watches nodes
        with LoadGenerator(c.cluster, history, spec, c.scratch / "load") as generator:
            time.sleep(5)
            processes = _processes(c.cluster, generator)
            loaded = _usage(processes, seconds)
        monitor.stop()
        for name in sorted(processes, key=lambda name: (processes[name][0], name)):
            rows.append({"process": name, "side": processes[name][0],
                         "idle_cpu_pct": round(idle[name][0], 1) if name in idle else "-",
                         "idle_rss_mib": round(idle[name][1]) if name in idle else "-",
                         "load_cpu_pct": round(loaded[name][0], 1), "load_rss_mib": round(loaded[name][1])})
        for side in ("cluster", "harness"):
            rows.append({"process": f"{side}, % of the machine ({os.cpu_count()} cores)", "side": side,
                         "idle_cpu_pct": round(_machine_pct(idle, idle_processes, side), 1), "idle_rss_mib": "",
                         "load_cpu_pct": round(_machine_pct(loaded, processes, side), 1), "load_rss_mib": ""})
    write_results("load_usage", rows, ["process", "side", "idle_cpu_pct", "idle_rss_mib", "load_cpu_pct",
                                       "load_rss_mib"],
                  "CPU and memory at 1000 hollow nodes: the cluster and the harness",
                  f"CPU in % of one core over {seconds:.0f} s from /proc/PID/stat (a process's own threads, not its "
                  "children); idle = Lease renewals of 1000 nodes (about 100 writes/s) and nothing else; load = the "
                  "ci API load (20 requests/s, 10 users) on top. The harness is Quorum's own processes: kwok (the "
                  "hollow nodes' kubelets), the locust workers and the bench's Python process (under load the node "
                  "readiness monitor runs there, as in the load suite). The % of the machine rows divide by every "
                  "core (issue #25's goal: the harness at most 15 % at the ci load).")


def busiest(used: dict[str, tuple[float, float]], top: int = 3) -> str:
    """The processes using the most CPU, in % of one core: what limits the count on this machine."""
    ranked = sorted(used.items(), key=lambda item: -item[1][0])[:top]
    return ", ".join(f"{name} {cpu:.0f} %" for name, (cpu, _) in ranked)


def capacity(counts: list[int], seconds: float) -> None:
    rows = []
    for count in counts:
        try:
            with Cluster(count) as c:
                history = History()
                monitor = NodeReadiness(c.cluster, history).start()
                spec = spec_for(c.cluster, users=10, rate_per_s=20, duration_s=seconds)
                load = ScrapedLoad(c.cluster, history, LoadGenerator(c.cluster, history, spec, c.scratch / "load"))
                load.generator.start()
                time.sleep(5)  # the workers' start-up is not the cluster's load
                processes = _processes(c.cluster, load.generator)
                used = _usage(processes, max(seconds - 15, 10.0))
                load.wait()
                monitor.stop()
                # judged as the load suite's steady scenario judges: latency inside the apiservers (the SLI's own
                # definition), errors, heartbeats; the client's 20 s windows shown beside it
                verdicts = [server_latency_slo(history), error_rate(history), heartbeat_health(history, expected=count)]
                client = latency_slo(history, window_s=20.0)
                rows.append({"nodes": count, "nodes_ready_s": round(c.hollow["nodes_ready_s"], 1),
                             "slos_met": "yes" if all(verdicts) else "no",
                             "client_side_met": "yes" if client.passed else "no",
                             "machine_busy_pct": round(_machine_pct(used, processes, "cluster")
                                                       + _machine_pct(used, processes, "harness"), 1),
                             "busiest": busiest(used),
                             "failed": "; ".join(v.explanation[:160] for v in verdicts if not v.passed) or "-"})
        except Exception as error:  # noqa: BLE001 - a count the machine cannot bring up is a figure too
            rows.append({"nodes": count, "nodes_ready_s": "-", "slos_met": "no", "client_side_met": "-",
                         "machine_busy_pct": "-", "busiest": "-", "failed": f"up failed: {str(error)[:160]}"})
    # counts measured in an earlier run are kept unless measured again, so a sweep can be refined
    earlier = ROOT / "bench" / "results" / "load_capacity.json"
    if earlier.exists():
        measured = {row["nodes"] for row in rows}
        rows += [row for row in json.loads(earlier.read_text())["rows"] if row["nodes"] not in measured]
    rows.sort(key=lambda row: row["nodes"])
    write_results("load_capacity", rows, ["nodes", "nodes_ready_s", "slos_met", "client_side_met", "machine_busy_pct",
                                          "busiest", "failed"],
                  "Highest hollow node count with the SLOs met",
                  f"Each count: its own cluster (one kwok controller per 1500 nodes), the ci load for {seconds:.0f} s, "
                  "the latency SLOs inside the apiservers over the load's window (as the load suite judges them, "
                  "docs/load.md), the 0.5 % error budget and node heartbeats; client_side_met: the same SLOs at the "
                  "client in 20 s windows (shown, not judged; rows measured before 2026-11-28 were judged only at the "
                  "client, so their slos_met is -). machine_busy_pct: the cluster's and the harness's processes "
                  "together, in % of every core, over the load's middle; busiest: the processes using the most of one "
                  "core in that window, the first to saturate as the count grows (rows without them were measured "
                  "before 2026-11-29). Rows can come from separate runs "
                  "(bench/results/load_capacity.json keeps counts not measured again).")


def rps(seconds: float, rounds: int) -> None:
    import load_rps

    with Cluster(1000) as c:
        url = f"{c.cluster.topology.api_endpoint}/readyz"
        ca, _ = c.cluster.load_credentials()
        generators = {
            "locust (1 process, FastHttpUser, 20 users, client certificate)":
                lambda: load_rps.generator(c, seconds, False),
            "locust (1 process, FastHttpUser, 20 users, anonymous)": lambda: load_rps.generator(c, seconds, True),
            "load suite's reader (1 process, 20 connections, client certificate)":
                lambda: load_rps.generator(c, seconds, False, plain_reads=True),
            "load suite's reader (1 process, 20 connections, anonymous)":
                lambda: load_rps.generator(c, seconds, True, plain_reads=True),
            "vegeta (1 process, 20 workers, anonymous)":
                lambda: load_rps.vegeta(url, ca, seconds, c.scratch / "vegeta"),
            "python, plain TLS sockets (1 process, 20 connections, anonymous)":
                lambda: load_rps.python_plain(url, ca, seconds),
            "wrk (1 thread, 20 connections, anonymous)": lambda: load_rps.wrk(url, seconds),
        }
        runs: dict[str, list] = {tool: [] for tool in generators}
        for round_ in range(rounds):  # each round runs every generator once, so a drift is shared by all of them
            for tool, run in generators.items():
                runs[tool].append(run())
                print(f"round {round_ + 1}/{rounds}: {tool}: {runs[tool][-1]}", flush=True)
        measured = {tool: load_rps.combined(each) for tool, each in runs.items()}
    write_results("load_rps", load_rps.rows(measured, seconds, "wrk (1 thread, 20 connections, anonymous)"),
                  ["tool", "rps", "cpu_cores", "rps_per_core", "tcp_opens", "on_cpu", "waiting"],
                  "Requests per second: one locust process, the load suite's reader, vegeta, a plain Python client "
                  "and wrk",
                  f"All against GET /readyz through the load balancer of a 1000-node cluster, {seconds:.0f} s each, "
                  f"one after the other in the same run, {rounds} round(s) of all of them; each figure is the mean "
                  "over its rounds (rps_per_core: all requests over all CPU seconds). /readyz is allowed "
                  "anonymously, so wrk (no client certificates), vegeta, the plain Python client "
                  "(bench/python_clients.py), locust and the load suite's plain reader (harness/load/reader.py, "
                  "which sends the load's rate-only reads) hit the same endpoint; locust and the reader also run "
                  "anonymously, so the server does the same work for them as for wrk. All use HTTP/1.1 and 20 "
                  "connections. cpu_cores: the generator's own CPU time (user + system, from getrusage of its "
                  "reaped process, locust's start-up included) over the run; rps_per_core: requests per CPU second "
                  "of the generator, what issue #25's 0.6 goal compares; tcp_opens: TCP connections opened during "
                  "the run (nstat TcpActiveOpens: one per connection means connections are reused); on_cpu and "
                  "waiting: cores the generator ran on and waited for while runnable, over the middle of its run "
                  "(/proc/PID/task/*/schedstat). The server shares the machine, so rps alone also measures how "
                  "much CPU each generator leaves it.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["ready", "usage", "capacity", "rps"])
    parser.add_argument("--counts", type=int, nargs="+", default=None)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=3, help="rps: rounds of every generator, interleaved")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: give at least 1 (each round runs every generator once)")
    interrupt_on_signals()  # SIGTERM and SIGHUP unwind like Ctrl-C: the cluster is taken down, the generators killed
    try:
        if args.mode == "ready":
            ready(args.counts or [1000])
        elif args.mode == "usage":
            usage(args.seconds)
        elif args.mode == "capacity":
            capacity(args.counts or [1000, 2000, 3000], max(args.seconds, 60.0))
        else:
            rps(args.seconds, args.rounds)
    except KeyboardInterrupt as stopped:
        sys.exit(f"load.py {args.mode}: stopped ({stopped}); its cluster is down and its generators stopped, "
                 "nothing more was written")


if __name__ == "__main__":
    main()
