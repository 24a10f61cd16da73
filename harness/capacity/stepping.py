"""A rising load, step by step: each step offers the users' mix at a higher rate for a fixed time, and records what
the cluster made of it (steps.py) from the History, the apiservers' metrics, the generator's processes' CPU and
the machine's (observed.py). The climb stops at the first step where the knee's rules (knee.py) see a limit, the
cluster's or the generator's, or after its last rate."""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

from harness.capacity.expected import NODE_LEASE_RENEW_S, rates_of_mix
from harness.capacity.knee import KneeLimits, find_knee
from harness.capacity.observed import (busiest_pct, generator_window, lease_renewals_rps, machine_busy_pct,
                                       p99_by_class, seats_in_use)
from harness.capacity.steps import CapacityStep, record_step
from harness.history import History
from harness.load.generator import LoadGenerator
from harness.load.spec import CHURN_LIMIT_PER_S, LoadSpec
from harness.metrics import api_responsiveness, flowcontrol
from harness.target.protocol import Target

SEATS_READ_AT = 0.6  # of a step's time: the seats in use are a gauge, read while the load runs, not once it stopped
# the generator's CPU is read between these two points of a step: after its processes' start-up (locust's imports
# cost it a second or two of CPU), and before they stop
CPU_READ_FROM, CPU_READ_TO = 0.25, 0.9
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# users (locust's, and the plain reader's connections) a step starts per request per second: each sends one request
# every 4 s at most, so a LIST of every node or pod, 1.6-1.9 s under the ci load on 1000 hollow nodes (docs/load.md)
# and slower near the knee, does not hold back its user's next request. A user waits for its answer (a closed loop):
# with fewer, a slow answer would lower the rate offered, and the shortfall would be the generator's, not the
# cluster's
USERS_PER_RPS = 4.0
MAX_USERS = 1000  # LoadSpec's own bound


@dataclass(frozen=True)
class Climb:
    """rates_per_s: the users' offered rates, rising, one per step; step_s: each step's time; limits: the knee's."""

    rates_per_s: tuple[float, ...]
    step_s: float
    limits: KneeLimits

    def __post_init__(self) -> None:
        if not self.rates_per_s or any(b <= a for a, b in zip(self.rates_per_s, self.rates_per_s[1:])):
            raise ValueError(f"a climb's rates must rise, one per step: {self.rates_per_s}")
        if self.step_s <= 0:
            raise ValueError(f"a step must last, not {self.step_s:g} s")


def step_spec(base: LoadSpec, rate_per_s: float, seconds: float) -> LoadSpec:
    """The base load at `rate_per_s` for `seconds`, with users enough to send it. Above the SLOs' churn prerequisite
    (20 objects/s) the step keeps the mix: a capacity search asks where the cluster breaks under more of the same
    load; the step's record says how much churn it sent."""
    at_rate = base.model_copy(update={"rate_per_s": rate_per_s, "duration_s": seconds})
    users = min(MAX_USERS, max(base.users, math.ceil(rate_per_s * USERS_PER_RPS)))
    churn_limit = max(CHURN_LIMIT_PER_S, math.ceil(at_rate.churn_per_s))
    return LoadSpec.model_validate({**at_rate.model_dump(), "users": users, "churn_limit_per_s": churn_limit})


def _cpu_s(pids: list[int]) -> dict[int, float]:
    """Each running process's CPU seconds so far (user and system, /proc/<pid>/stat); one that exited is left out."""
    taken = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        taken[pid] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime and stime: fields 14 and 15 of stat
    return taken


def _machine_ticks() -> tuple[int, int]:
    """This machine's (busy, all) clock ticks so far, over its cores: /proc/stat's first line's user to steal
    fields, idle and iowait counted as not busy (guest time is already in user's)."""
    ticks = [int(field) for field in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


def _requests_by_host(before: api_responsiveness.Scrape, after: api_responsiveness.Scrape) -> dict[str, float]:
    """Requests each apiserver served between two scrapes (their histograms' counts' growth)."""
    served = {}
    for host in sorted(set(before) & set(after)):
        total = 0.0
        for call, buckets in after[host].items():
            grew = buckets.get(math.inf, 0.0) - before[host].get(call, {}).get(math.inf, 0.0)
            total += grew if grew >= 0 else buckets.get(math.inf, 0.0)
        served[host] = total
    return served


@dataclass(frozen=True)
class StepRun:
    """A step's record, and how many requests each apiserver served in it (the busiest is the N-1 case's loss)."""

    step: CapacityStep
    served_by_host: dict[str, float]


def run_step(cluster: Target, history: History, spec: LoadSpec, work_dir: Path, apiservers_up: int) -> StepRun:
    """One step: the apiservers scraped, the load run for its time (the seats read during it), scraped again."""
    api_before, apf_before, scraped_at = api_responsiveness.scrape(cluster), flowcontrol.scrape(cluster), time.monotonic()
    with LoadGenerator(cluster, history, spec, work_dir) as generator:  # stopped however the step ends
        started = generator.started_at or time.monotonic()
        pids = [process.pid for process in generator.processes]

        def at(share: float) -> float:
            """Sleep until `share` of the step's time has passed; the time then."""
            time.sleep(max(0.0, started + spec.duration_s * share - time.monotonic()))
            return time.monotonic()

        read_from = at(CPU_READ_FROM)
        cpu_from, machine_from = _cpu_s(pids), _machine_ticks()
        at(SEATS_READ_AT)
        apf_during = flowcontrol.scrape(cluster)
        read_to = at(CPU_READ_TO)
        cpu_to, machine_to = _cpu_s(pids), _machine_ticks()
        generator.wait()
    api_after, apf_after = api_responsiveness.scrape(cluster), flowcontrol.scrape(cluster)
    scraped_s = time.monotonic() - scraped_at
    rows, _ = api_responsiveness.between(api_before, api_after)
    rejected, _ = flowcontrol.between(apf_before, apf_after)
    seats, _ = flowcontrol.between(apf_before, apf_during)
    sent = generator_window(history.ops_of(), started, started + spec.duration_s)
    renewals = lease_renewals_rps(rows, scraped_s)
    step = CapacityStep(
        offered_rps=rates_of_mix(spec.mix, spec.rate_per_s), achieved_rps=sent.answered_rps,
        p99_s=p99_by_class(rows), rejected=sum(level.rejected for level in rejected), failed=sent.failed,
        requests=sent.requests, generator_busy_pct=busiest_pct(cpu_from, cpu_to, read_to - read_from),
        apiservers_up=apiservers_up, saturation=seats_in_use(seats),
        background_rps={"mutating": round(len(cluster.hollow_nodes()) / NODE_LEASE_RENEW_S, 3)},
        lease_renewals_rps=renewals, machine_busy_pct=machine_busy_pct(machine_from, machine_to))
    return StepRun(step, _requests_by_host(api_before, api_after))


def climb(cluster: Target, history: History, base: LoadSpec, plan: Climb, work_dir: Path,
          apiservers_up: int) -> list[StepRun]:
    """The plan's steps in order, each recorded in the History as it ends, until one shows a limit."""
    runs: list[StepRun] = []
    for index, rate in enumerate(plan.rates_per_s):
        spec = step_spec(base, rate, plan.step_s)
        history.event("capacity.step.start", rate_per_s=rate, users=spec.users, churn_per_s=round(spec.churn_per_s, 1),
                      apiservers_up=apiservers_up)
        run = run_step(cluster, history, spec, work_dir / f"up{apiservers_up}-step{index}", apiservers_up)
        record_step(history, run.step)
        runs.append(run)
        if find_knee([r.step for r in runs], plan.limits).stopped_by is not None:
            break
    return runs
