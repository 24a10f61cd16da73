"""The production load a control plane must carry: requests per second by SLO class from the users, and the node
count, whose kubelets add their heartbeats. A capacity verdict divides what the cluster carried at its knee by this.

The default is the tier seed 003 designs for, 1000 nodes, with the users' mix of the load suite (harness/load/
spec.py DEFAULT_MIX) at the nightly profile's rate. Each node's kubelet renews its Lease every 10 s (KEP-589: a
quarter of nodeLeaseDurationSeconds, 40 s), one mutating request each: 100 requests per second at 1000 nodes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from harness.load.spec import DEFAULT_MIX, TASKS
from harness.objectives.catalog import SLO_CLASSES

DEFAULT_NODES = 1000  # seed 003: the master tier is designed for 1000 nodes
DEFAULT_USER_RATE_PER_S = 40.0  # the nightly profile's user load (fixtures/settings.py), the load suite's largest
NODE_LEASE_RENEW_S = 10.0  # KEP-589: the kubelet renews its node Lease every 0.25 x nodeLeaseDurationSeconds (40 s)


def class_of_task(task: str) -> str | None:
    """The SLO class of one of the load generator's tasks (harness/load/spec.py TASKS); None for a watch (a stream,
    not a rate) and for the health reads no SLO covers."""
    verb, _, scope = TASKS[task]
    if verb in ("mutate", "patch"):
        return "mutating"
    if verb == "get" and scope == "resource":
        return "get"
    if verb == "list":
        return "list_namespace" if scope == "namespace" else "list_cluster"
    return None


def rates_of_mix(mix: dict[str, int], rate_per_s: float) -> dict[str, float]:
    """Requests per second by SLO class when `rate_per_s` requests are sent in the mix's weights (streams and
    health reads left out)."""
    total = sum(mix.values())
    rates = {klass: 0.0 for klass in SLO_CLASSES}
    for task, weight in mix.items():
        klass = class_of_task(task)
        if klass is not None and total:
            rates[klass] += rate_per_s * weight / total
    return {klass: round(rate, 3) for klass, rate in rates.items()}


class ExpectedLoad(BaseModel):
    """`expected_load:` of the gate policy: `nodes`, and `user_rps` by SLO class (mutating, get, list_namespace,
    list_cluster; a class left out keeps its default)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    nodes: int = Field(DEFAULT_NODES, ge=0, le=100_000)
    user_rps: dict[str, float] = Field(default_factory=lambda: rates_of_mix(DEFAULT_MIX, DEFAULT_USER_RATE_PER_S))

    @field_validator("user_rps")
    @classmethod
    def known_classes(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(SLO_CLASSES))
        if unknown:
            raise ValueError(f"unknown SLO classes {unknown}; name some of {', '.join(SLO_CLASSES)}")
        if any(rate < 0 or rate > 100_000 for rate in value.values()):
            raise ValueError("each rate is requests per second, from 0 to 100000")
        rates = {**rates_of_mix(DEFAULT_MIX, DEFAULT_USER_RATE_PER_S), **value}
        if not any(rate > 0 for rate in rates.values()):  # the capacity search multiplies the users' load
            raise ValueError("the users send no request at all: give one class a rate above 0, or leave user_rps "
                             "out for the load suite's nightly mix")
        return rates

    def background_rps(self) -> dict[str, float]:
        """By SLO class, what the nodes send whatever the users do: each node's Lease renewal, a mutating request."""
        return {"mutating": round(self.nodes / NODE_LEASE_RENEW_S, 3)}

    def rps(self) -> dict[str, float]:
        """Requests per second by SLO class: the users' and, as mutating requests, the nodes' Lease renewals."""
        rates = dict(self.user_rps)
        for klass, rate in self.background_rps().items():
            rates[klass] = round(rates[klass] + rate, 3)
        return rates


def mix_for(user_rps: dict[str, float], base: dict[str, int] = DEFAULT_MIX) -> dict[str, int]:
    """A task mix (harness/load/spec.py) whose SLO classes carry the shares of `user_rps`: each class's rate spread
    over `base`'s tasks of that class in their weights, in whole weights of a thousand. Watches and health reads
    (no class) are left out: a capacity step counts requests."""
    total = sum(user_rps.values())
    if total <= 0:
        raise ValueError("the expected load names no user requests to send")
    mix: dict[str, int] = {}
    for klass, rate in user_rps.items():
        tasks = {task: weight for task, weight in base.items() if class_of_task(task) == klass and weight > 0}
        if rate > 0 and not tasks:
            raise ValueError(f"no task of the load's mix sends {klass} requests")
        for task, weight in tasks.items():
            mix[task] = round(1000 * rate / total * weight / sum(tasks.values()))
    return {task: weight for task, weight in mix.items() if weight > 0}
