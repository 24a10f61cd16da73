"""`python bench/client_floor.py`: what one request costs the client's own CPU, by kind of client.

The server costs next to nothing and is the same for all: HAProxy on loopback answering 200 itself over TLS. Measured
one after the other: wrk, lean Python clients on plain TLS sockets and the same under gevent (locust runs every user
in a greenlet, on gevent's sockets; bench/python_clients.py), the load suite's plain reader (harness/load/reader.py,
with its pacing, records and bounds) and locust's FastHttpUser. Issue #25's goal compares a
generator's requests per CPU second with wrk's; this separates what Python, gevent and locust each add to a request
(docs/load.md).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from common import write_results  # noqa: E402
from harness.faults.signals import interrupt_on_signals  # noqa: E402
from harness.net.loopback import free_port  # noqa: E402

SECONDS = 15.0  # long enough that locust's start-up (about 1.5 CPU-s) is a small part of its figure
COLUMNS = ["client", "connections", "requests", "cpu_s", "requests_per_cpu_s", "us_per_request", "ratio_to_wrk"]


@dataclass(frozen=True)
class Run:
    client: str
    connections: int
    requests: int
    cpu_s: float  # the client process's own user + system CPU (getrusage of the reaped child), start-up included


def measured(client: str, connections: int, argv: list[str], count: Callable[[str], int], cwd: Path) -> Run:
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd)
    try:
        output = process.stdout.read()
    except BaseException:  # a signal (interrupt_on_signals) or an error: the client goes with the bench
        process.kill()
        process.wait()
        raise
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{client} exited {process.returncode}: {output[-1500:]}")
    return Run(client, connections, count(output), round(usage.ru_utime + usage.ru_stime, 2))


def wrk_requests(output: str) -> int:
    match = re.search(r"(\d+) requests in", output)
    if match is None or re.search(r"Non-2xx|Socket errors", output):
        raise RuntimeError(f"wrk did not finish cleanly: {output[-1500:]}")
    return int(match.group(1))


def locust_requests(stats_csv: Path) -> int:
    with stats_csv.open() as handle:
        rows = [row for row in csv.DictReader(handle) if row["Name"] == "Aggregated"]
    if not rows or int(rows[0]["Failure Count"]):
        raise RuntimeError(f"locust failed requests: {rows}")
    return int(rows[0]["Request Count"])


def rows(runs: list[Run]) -> list[dict]:
    """The table: each client's cost per request, and its requests per CPU second against wrk's with as many
    connections (the ratio issue #25's goal names)."""
    wrk = {run.connections: run.requests / run.cpu_s for run in runs if run.client == "wrk"}
    table = []
    for run in runs:
        per_cpu_s = run.requests / run.cpu_s
        table.append({"client": run.client, "connections": run.connections, "requests": run.requests,
                      "cpu_s": run.cpu_s, "requests_per_cpu_s": round(per_cpu_s),
                      "us_per_request": round(1e6 / per_cpu_s, 1),
                      "ratio_to_wrk": round(per_cpu_s / wrk[run.connections], 3) if run.connections in wrk else ""})
    return table


def serve(directory: Path, port: int) -> subprocess.Popen:
    """HAProxy answering 200 itself on 127.0.0.1:port over TLS, with a throwaway certificate."""
    from harness.pki import LOOPBACK, Authority, write_private

    pair = Authority(directory / "pki", "quorum-bench-client-floor").issue("server", "localhost", server=True,
                                                                             ips=(LOOPBACK,))
    bundle = directory / "server.pem"
    write_private(bundle, pair.cert.read_bytes() + pair.key.read_bytes())
    config = directory / "haproxy.cfg"
    config.write_text("\n".join([
        "global", "  maxconn 1000", "defaults", "  mode http", "  timeout connect 2s", "  timeout client 30s",
        "  timeout server 30s", "frontend answers", f"  bind 127.0.0.1:{port} ssl crt {bundle}",
        "  http-request return status 200 content-type text/plain string ok", ""]))
    server = subprocess.Popen(["haproxy", "-db", "-f", str(config)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("HAProxy did not listen within 10 s")


def run_all(seconds: float) -> list[Run]:
    with tempfile.TemporaryDirectory(prefix="quorum-client-floor-") as temporary:
        directory, port = Path(temporary), free_port()
        url = f"https://127.0.0.1:{port}/readyz"
        (directory / "locustfile.py").write_text(
            "from locust import FastHttpUser, task\n\n\nclass Reads(FastHttpUser):\n"
            f"    host = 'https://127.0.0.1:{port}'\n    insecure = True\n\n"
            "    @task\n    def readyz(self):\n        self.client.get('/readyz')\n")
        server = serve(directory, port)
        this = [sys.executable, str(Path(__file__).resolve().parent / "python_clients.py")]

        def printed(output: str) -> int:  # a Python client prints "<requests> <seconds>"
            return int(output.split()[-2])

        reader = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                                        "from harness.load.reader import main; sys.exit(main(*sys.argv[1:]))",
                  *(str(directory / f"reader.{name}") for name in ("spec.json", "jsonl", "summary.json"))]
        (directory / "reader.spec.json").write_text(json.dumps({
            "endpoint": f"https://127.0.0.1:{port}", "ca": str(directory / "pki" / "ca.crt"), "cert": "-", "key": "-",
            "anonymous": True, "mix": {"readyz": 1}, "users": 20, "rate_per_s": 5000, "duration_s": seconds,
            "unpaced": True}))

        try:
            return [
                measured("wrk", 1, ["wrk", "-t1", "-c1", f"-d{int(seconds)}s", url], wrk_requests, directory),
                measured("wrk", 20, ["wrk", "-t1", "-c20", f"-d{int(seconds)}s", url], wrk_requests, directory),
                *(measured(name, n, [*this, kind, url, str(n), str(seconds)], printed, directory)
                  for name, kind in (("python, plain TLS sockets", "plain"), ("python under gevent", "gevent"))
                  for n in (1, 20)),
                measured("the load suite's reader (1 process)", 20, reader,
                         lambda _: json.loads((directory / "reader.summary.json").read_text())["requests"], directory),
                measured("locust FastHttpUser (1 process)", 20,
                         [sys.executable, "-m", "locust", "-f", "locustfile.py", "--headless", "-u", "20", "-r", "20",
                          "-t", f"{int(seconds)}s", "--only-summary", "--csv", "floor"],
                         lambda _: locust_requests(directory / "floor_stats.csv"), directory),
            ]
        finally:
            server.terminate()
            server.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=SECONDS, help="each client's run (default %(default)s)")
    options = parser.parse_args()
    if options.seconds < 1:
        parser.error(f"--seconds {options.seconds}: each client runs at least 1 s (wrk counts whole seconds)")
    interrupt_on_signals()  # SIGTERM and SIGHUP unwind like Ctrl-C: the client and the server are stopped
    try:
        table = rows(run_all(options.seconds))
    except KeyboardInterrupt as stopped:
        sys.exit(f"client_floor: stopped ({stopped}); its client and HAProxy are stopped, nothing was written")
    write_results("client_floor", table, COLUMNS, "What a request costs the client's own CPU, by kind of client",
                  notes="Each client alone against HAProxy answering 200 itself over TLS on loopback (the same "
                        "endpoint and server for all), one after the other, for the same time. cpu_s: the client "
                        "process's own CPU (getrusage of the reaped child, start-up included); ratio_to_wrk: requests "
                        "per CPU second against wrk's with as many connections, the ratio issue #25's goal names "
                        "(0.6). What the rows say: docs/load.md.")
    for row in table:
        print(row)


if __name__ == "__main__":
    main()
