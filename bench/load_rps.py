"""`python bench/load.py rps`: one locust process, the load suite's plain reader, vegeta, a plain Python client and
wrk on the same endpoint, one after the other in one run.

For each generator: requests/s, its own CPU, the TCP connections it opened and how much of a core it ran on and
waited for while runnable in the middle of its run. Those last two tell a generator that costs too much per request
from one that is starved by the cluster beside it on the same cores (issue #25, docs/load.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from harness.history import History
from harness.load.generator import LoadGenerator, spec_for
from harness.toolchain.install import Toolchain

USERS = 20  # concurrent connections of every generator


@dataclass(frozen=True)
class Measured:
    requests_per_s: float
    cpu_s: float  # the generator's own CPU (user + system) from getrusage of its reaped process, start-up included
    tcp_opens: int  # TCP connections this network namespace opened during the run
    on_cpu: float  # cores it ran on, middle of the run (all its threads)
    waiting: float  # cores it waited for while runnable, same window


def parse_nstat(text: str, counter: str) -> int:
    """A counter's value from `nstat -az <counter>` output."""
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0] == counter:
            return int(fields[1])
    raise ValueError(f"nstat printed no {counter}: {text!r}")


def tcp_active_opens() -> int:
    out = subprocess.run(["nstat", "-az", "TcpActiveOpens"], capture_output=True, text=True, check=True).stdout
    return parse_nstat(out, "TcpActiveOpens")


def schedstat(pid: int) -> tuple[float, float]:
    """Seconds all threads of a process have run on a CPU and waited runnable for one (/proc/PID/task/*/schedstat);
    threads that ended are not counted, so callers take differences over a window the process is steady in."""
    ran = waited = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            on_cpu_ns, waiting_ns, _ = task.joinpath("schedstat").read_text().split()
        except (FileNotFoundError, ProcessLookupError):
            continue  # the thread ended between the listing and the read
        ran, waited = ran + int(on_cpu_ns) / 1e9, waited + int(waiting_ns) / 1e9
    return ran, waited


def children_cpu_s() -> float:
    """CPU seconds (user + system) of this process's reaped children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(seconds: float, start: Callable[[], int], finish: Callable[[], float]) -> Measured:
    """Run one generator: `start` launches it and returns its pid, `finish` waits for it and returns requests/s."""
    cpu, opens = children_cpu_s(), tcp_active_opens()
    pid = start()
    try:
        warm = min(4.0, seconds / 4)  # start-up and connecting are left out of the on-CPU and waiting figures
        time.sleep(warm)
        ran0, waited0, t0 = *schedstat(pid), time.monotonic()
        time.sleep(max(seconds - 2 * warm, 1.0))
        ran1, waited1, t1 = *schedstat(pid), time.monotonic()
        rate = finish()
    except BaseException:  # a signal (bench/load.py) or an error: the generator does not outlive the bench
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        raise
    return Measured(rate, children_cpu_s() - cpu, tcp_active_opens() - opens,
                    (ran1 - ran0) / (t1 - t0), (waited1 - waited0) / (t1 - t0))


def generator(c, seconds: float, anonymous: bool, plain_reads: bool = False) -> Measured:
    """The load suite's generator on GET /readyz unpaced: one locust process, or with plain_reads its plain reader
    (a rate-only read, which the load suite sends from the reader: harness/load/reader.py)."""
    spec = spec_for(c.cluster, users=USERS, rate_per_s=5000, duration_s=seconds, mix={"readyz": 1}, unpaced=True,
                    processes=1, anonymous=anonymous, plain_reads=plain_reads)
    generator = LoadGenerator(c.cluster, History(), spec, c.scratch / "load")

    def start() -> int:
        return generator.start().processes[0].pid

    return measure(seconds, start, lambda: generator.wait().rps)


def wrk(url: str, seconds: float) -> Measured:
    process: list[subprocess.Popen] = []

    def start() -> int:
        process.append(subprocess.Popen(["wrk", "-t1", f"-c{USERS}", f"-d{int(seconds)}s", url],
                                        stdout=subprocess.PIPE, text=True))
        return process[0].pid

    def finish() -> float:
        out, _ = process[0].communicate(timeout=seconds + 60)
        match = re.search(r"Requests/sec:\s+([\d.]+)", out)
        return float(match.group(1)) if match else 0.0

    return measure(seconds, start, finish)


def python_plain(url: str, ca: Path, seconds: float) -> Measured:
    """bench/python_clients.py's plain client: the connections multiplexed in one process, neither gevent nor locust
    (what a request costs Python itself: docs/load.md)."""
    process: list[subprocess.Popen] = []

    def start() -> int:
        process.append(subprocess.Popen([sys.executable, str(Path(__file__).resolve().parent / "python_clients.py"),
                                         "plain", url, str(USERS), str(seconds), str(ca)],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        return process[0].pid

    def finish() -> float:
        out, _ = process[0].communicate(timeout=seconds + 60)
        if process[0].returncode != 0:
            raise RuntimeError(f"the plain Python client failed: {out[-1500:]}")
        requests, elapsed = out.split()[-2:]
        return int(requests) / float(elapsed)

    return measure(seconds, start, finish)


def vegeta_rate(report: dict) -> float:
    """Successful requests/s from `vegeta report -type=json`; an attack where requests failed is no figure."""
    if report.get("requests", 0) == 0 or report.get("success", 0.0) < 1.0:
        raise RuntimeError(f"vegeta's requests did not all succeed: status codes {report.get('status_codes')}, "
                           f"errors {report.get('errors', [])[:3]}")
    return float(report["rate"])


def vegeta(url: str, ca: Path, seconds: float, work: Path) -> Measured:
    """vegeta unpaced (-rate=0) with as many workers as the others have connections, over HTTP/1.1 as they use."""
    binary, results = Toolchain().path("vegeta"), work / "vegeta.bin"
    work.mkdir(parents=True, exist_ok=True)
    process: list[subprocess.Popen] = []

    def start() -> int:
        process.append(subprocess.Popen(
            [str(binary), "attack", "-rate=0", f"-workers={USERS}", f"-max-workers={USERS}", f"-duration={seconds}s",
             "-http2=false", f"-root-certs={ca}", f"-output={results}"], stdin=subprocess.PIPE, text=True))
        process[0].stdin.write(f"GET {url}\n")
        process[0].stdin.close()
        return process[0].pid

    def finish() -> float:
        process[0].wait(timeout=seconds + 60)
        return 0.0  # read after the CPU figure is taken: the report's own work is not the generator's

    measured = measure(seconds, start, finish)
    report = subprocess.run([str(binary), "report", "-type=json", str(results)], capture_output=True, text=True,
                            check=True).stdout
    return replace(measured, requests_per_s=vegeta_rate(json.loads(report)))


def combined(runs: list[Measured]) -> Measured:
    """Rounds of one generator as one figure: the mean of each field, so requests per CPU second is all its requests
    over all its CPU (the server's speed drifts within minutes here: docs/load.md)."""
    if not runs:
        raise ValueError("no runs to combine")
    count = len(runs)
    return Measured(sum(m.requests_per_s for m in runs) / count, sum(m.cpu_s for m in runs) / count,
                    round(sum(m.tcp_opens for m in runs) / count), sum(m.on_cpu for m in runs) / count,
                    sum(m.waiting for m in runs) / count)


def rows(measured: dict[str, Measured], seconds: float, reference: str) -> list[dict]:
    """The table: each generator, then each one's ratio to the reference (wrk) in requests/s and per CPU second."""
    table = [{"tool": tool, "rps": round(m.requests_per_s, 1), "cpu_cores": round(m.cpu_s / seconds, 2),
              "rps_per_core": round(m.requests_per_s * seconds / m.cpu_s) if m.cpu_s else "-",
              "tcp_opens": m.tcp_opens, "on_cpu": round(m.on_cpu, 2), "waiting": round(m.waiting, 2)}
             for tool, m in measured.items()]
    ref = measured[reference]
    for tool, m in measured.items():
        if tool == reference:
            continue
        per_core = (m.requests_per_s / m.cpu_s) / (ref.requests_per_s / ref.cpu_s) if m.cpu_s and ref.cpu_s else None
        table.append({"tool": f"ratio {tool.split(' (')[0]} {tool.split(', ')[-1].rstrip(')')} / wrk",
                      "rps": round(m.requests_per_s / ref.requests_per_s, 3) if ref.requests_per_s else "-",
                      "cpu_cores": "", "rps_per_core": round(per_core, 3) if per_core else "-",
                      "tcp_opens": "", "on_cpu": "", "waiting": ""})
    return table
