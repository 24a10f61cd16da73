"""What a load run does: who, how fast, how long, which mix. Serialised to the worker processes."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.errors import QuorumError

CHURN_LIMIT_PER_S = 20.0  # the SLOs' prerequisite: at most 20 objects/s created or deleted (ANCHORS.md)
LOAD_NAMESPACE = "quorum-load"

# task -> (verb, resource, scope); scope follows the SLO: "resource" (one object), "namespace", "cluster"
TASKS: dict[str, tuple[str, str, str]] = {
    "get_node": ("get", "nodes", "resource"),
    "list_nodes": ("list", "nodes", "cluster"),
    "watch_node": ("watch", "nodes", "cluster"),
    "get_pod": ("get", "pods", "resource"),
    "list_pods_namespace": ("list", "pods", "namespace"),
    "list_pods_on_node": ("list", "pods", "cluster"),
    "watch_pods": ("watch", "pods", "namespace"),
    "configmap": ("mutate", "configmaps", "resource"),  # create, update or delete, one request each
    "pod": ("mutate", "pods", "resource"),  # create or delete
    "patch_node_status": ("patch", "nodes", "resource"),
    "readyz": ("get", "readyz", "health"),  # anonymous health read: bench/load.py compares locust with wrk on it
}
CHURNING = {"configmap": 2 / 3, "pod": 1.0}  # share of a task's requests that create or delete an object

DEFAULT_MIX = {
    "get_node": 20, "list_nodes": 2, "watch_node": 2, "get_pod": 15, "list_pods_namespace": 6,
    "list_pods_on_node": 10, "watch_pods": 2, "configmap": 20, "pod": 8, "patch_node_status": 15,
}


NODE_TASKS = {"get_node", "watch_node", "list_pods_on_node", "patch_node_status"}  # they pick one of `nodes`
# reads that need nothing a user remembers (no name it created) and end with one answer (no watch): a plain process
# sends them at their rate, far cheaper than a locust user (harness/load/reader.py, docs/load.md)
READ_TASKS = ("get_node", "list_nodes", "list_pods_namespace", "list_pods_on_node", "readyz")
# on a cluster without hollow nodes (someone else's): its real nodes are only read, and the only objects written are
# config maps in Quorum's own namespace; no pods (they would be scheduled and pull images), no node status patches
TARGET_MIX = {"get_node": 20, "list_nodes": 2, "watch_node": 2, "list_pods_on_node": 10, "list_pods_namespace": 6,
              "watch_pods": 2, "configmap": 30}


class LoadSpecError(QuorumError):
    pass


class LoadSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint: str
    ca: Path
    cert: Path
    key: Path
    nodes: list[str] = Field(default_factory=list, description="node names the users read (and patch, if hollow)")
    pods_namespace: str = "quorum-hollow"
    namespace: str = LOAD_NAMESPACE
    users: int = Field(10, ge=1, le=1000)
    rate_per_s: float = Field(20.0, gt=0, le=5000, description="requests per second over all users")
    duration_s: float = Field(60.0, gt=0, le=3600)
    processes: int = Field(1, ge=1, le=64)
    mix: dict[str, int] = Field(default_factory=lambda: dict(DEFAULT_MIX), description="task -> whole-number weight")
    request_timeout_s: float = Field(60.0, gt=0, description="client-side timeout of one request")
    churn_limit_per_s: float = CHURN_LIMIT_PER_S
    unpaced: bool = Field(False, description="no wait between requests (benchmarks): rate_per_s only bounds the count")
    anonymous: bool = Field(False, description="no client certificate (benchmarks: the health endpoints wrk reads)")
    # on by default since the load suite passed with it in a full CI (docs/load.md)
    plain_reads: bool = Field(True, description="the mix's READ_TASKS sent by one plain process (harness/load/"
                                                 "reader.py), the rest by locust; false: every task by locust")

    @model_validator(mode="after")
    def sane(self) -> "LoadSpec":
        unknown = sorted(set(self.mix) - set(TASKS))
        if unknown:
            raise ValueError(f"unknown tasks in mix {unknown}; fix: use {sorted(TASKS)}")
        naming = sorted(t for t in NODE_TASKS if self.mix.get(t, 0) > 0)
        if naming and not self.nodes:
            raise ValueError(f"the tasks {naming} name a node, and nodes is empty; fix: list nodes, or weigh those "
                             "tasks 0")
        authenticated = sorted(t for t, w in self.mix.items() if w > 0 and TASKS[t][2] != "health")
        if self.anonymous and authenticated:
            raise ValueError(f"anonymous requests are refused except on the health endpoints, and {authenticated} "
                             "read or write the API; fix: drop anonymous, or weigh only readyz")
        if not any(w > 0 for w in self.mix.values()) or any(w < 0 for w in self.mix.values()):
            raise ValueError("mix weights must be >= 0 with at least one positive; fix: e.g. {get_node: 1}")
        if self.churn_per_s > self.churn_limit_per_s:
            raise ValueError(
                f"this mix creates and deletes {self.churn_per_s:.1f} objects/s, above the SLOs' prerequisite of "
                f"{self.churn_limit_per_s:.0f}/s, so an SLO verdict would mean nothing; fix: lower rate_per_s or the "
                f"weights of {sorted(CHURNING)}")
        return self

    @property
    def churn_per_s(self) -> float:
        total = sum(self.mix.values())
        return self.rate_per_s * sum(self.mix.get(t, 0) * share for t, share in CHURNING.items()) / total

    @property
    def max_requests(self) -> int:
        """Every loop is bounded in count as well as time: 20 % above the planned number."""
        return int(self.rate_per_s * self.duration_s * 1.2) + 100

    def share(self, process: int) -> "LoadSpec":
        """This worker process's part: users and rate split evenly."""
        users = self.users // self.processes + (1 if process < self.users % self.processes else 0)
        return self.model_copy(update={"users": max(users, 1), "rate_per_s": self.rate_per_s / self.processes,
                                       "processes": 1})

    def split(self) -> tuple["LoadSpec | None", "LoadSpec | None"]:
        """(the reads for the plain reader, the rest for locust): each with its tasks' weights, its share of the rate
        and of the users (a reader connection is paced and waits for its answer as a locust user does); None for a
        part with no weight. The churn stays whole in locust's part."""
        reads = {t: w for t, w in self.mix.items() if t in READ_TASKS and w > 0} if self.plain_reads else {}
        rest = {t: w for t, w in self.mix.items() if t not in reads and w > 0}
        if not reads or not rest:
            return (self.model_copy(update={"mix": reads, "processes": 1}), None) if reads else (None, self)
        share = sum(reads.values()) / (sum(reads.values()) + sum(rest.values()))
        read_users = min(max(round(self.users * share), 1), self.users - 1) if self.users > 1 else 1
        return (self.model_copy(update={"mix": reads, "rate_per_s": self.rate_per_s * share, "users": read_users,
                                        "processes": 1}),
                self.model_copy(update={"mix": rest, "rate_per_s": self.rate_per_s * (1 - share),
                                        "users": max(self.users - read_users, 1)}))


def read_path(task: str, spec: LoadSpec, node: str) -> str:
    """The path a read task GETs (`node`: the node it names, if it names one); locust's users and the plain reader
    send the same requests."""
    paths = {"get_node": f"/api/v1/nodes/{node}", "list_nodes": "/api/v1/nodes?limit=500",
             "list_pods_namespace": f"/api/v1/namespaces/{spec.pods_namespace}/pods?limit=500",
             "list_pods_on_node": f"/api/v1/pods?fieldSelector=spec.nodeName%3D{node}", "readyz": "/readyz"}
    return paths[task]


def parse_spec(data: object) -> LoadSpec:
    from pydantic import ValidationError

    try:
        return LoadSpec.model_validate(data)
    except ValidationError as error:
        lines = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg'].removeprefix('Value error, ')}"
                          for e in error.errors())
        raise LoadSpecError(f"invalid load settings: {lines}", "correct the load profile as the message says") from None


def read_spec_file(path: str) -> LoadSpec:
    """A LoadSpec from a JSON file a user wrote (the worker, the reader and the locustfile read one); LoadSpecError
    saying what is wrong with it, never a traceback."""
    try:
        text = Path(path).read_bytes()  # json.loads decodes it: a file that is not UTF-8 is "not JSON", not a traceback
    except OSError as error:
        raise LoadSpecError(f"cannot read the load spec {path}: {error.strerror or error}",
                            "give the path of a LoadSpec JSON file (docs/load.md, \"Distributed\")") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise LoadSpecError(f"the load spec {path} is not JSON: {error}", "write it as a JSON object") from None
    return parse_spec(data)


def spec_file_or_exit(path: str, program: str) -> LoadSpec:
    """read_spec_file for a process's entry point: a bad spec ends it with the message on stderr and exit status 1."""
    try:
        return read_spec_file(path)
    except LoadSpecError as error:
        raise SystemExit(f"{program}: {error}") from None
