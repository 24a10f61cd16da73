"""The objectives: what the user needs each measured property to be, in the promotion policy (gate.yaml,
`objectives:`). Each default follows from upstream defaults and published SLOs (shared ANCHORS.md, copied with
their sources into docs/gate.md), never from the cluster under test; each measure's record says where its default
comes from (catalog.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from harness import thresholds as t
from harness.objectives.catalog import COMPONENTS, MEASURES, SLO_CLASSES
from harness.topology import Component, EtcdSettings, HealthCheck, LeaderElection

WRITER_TIMEOUT_S = 2.0  # the etcd writer's request timeout (harness/monitors/etcd_writer.py)


def _default_time_to_healthy() -> dict[str, float]:
    return {c: round(t.KUBELET_RELIST_S + 2 * t.KUBELET_CRASH_BACKOFF_S + t.STARTUP_ALLOWANCE_S[Component(c)], 1)
            for c in COMPONENTS}


def _default_restore_s() -> float:
    return round(t.STARTUP_ALLOWANCE_S[Component.ETCD] + t.STARTUP_ALLOWANCE_S[Component.APISERVER]
                 + t.leader_failover_bound_s(LeaderElection()) + HealthCheck().interval_s * HealthCheck().rise, 1)


class Objectives(BaseModel):
    """Each field is the objective for the measure of the same name (harness/objectives/catalog.py)."""

    # numbers only (not "1.5", not true) and finite: an .inf objective would let every figure pass
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    time_to_healthy_s: dict[str, float] = Field(default_factory=_default_time_to_healthy)
    lease_failover_s: float = Field(round(t.leader_failover_bound_s(LeaderElection()), 1), gt=0)
    lease_give_up_s: float = Field(round(t.leader_give_up_bound_s(LeaderElection()), 1), gt=0)
    lb_detection_s: float = Field(round(t.lb_detection_bound_s(HealthCheck()), 1), gt=0)
    lb_detection_hung_s: float = Field(round(t.lb_detection_bound_s(HealthCheck(), hang_s=HealthCheck().timeout_s), 1),
                                       gt=0)
    etcd_leader_change_s: float = Field(t.etcd_leader_change_bound_s(EtcdSettings()), gt=0)
    etcd_write_stall_s: float = Field(t.etcd_leader_change_bound_s(EtcdSettings()) + WRITER_TIMEOUT_S, gt=0)
    availability_pct: float = Field(t.AVAILABILITY_PCT, ge=0, le=100)
    lost_writes: int = Field(0, ge=0)
    api_p99_s: dict[str, float] = Field(default_factory=lambda: {
        "mutating": t.SLO_MUTATING_S, "get": t.SLO_GET_S, "list_namespace": t.SLO_LIST_NAMESPACE_S,
        "list_cluster": t.SLO_LIST_CLUSTER_S})
    nodes_not_ready: int = Field(0, ge=0)
    pod_startup_s: float = Field(t.SLO_POD_STARTUP_S, gt=0)
    power_loss_recovery_s: float = Field(t.kind_power_loss_recovery_s(), gt=0)
    snapshot_restore_s: float = Field(default_factory=_default_restore_s, gt=0)
    checkpoint_refresh_s: float = Field(t.KUBELET_SYNC_PERIOD_S, gt=0)
    certificate_days_left: float = Field(t.CERTIFICATE_RENEW_BEFORE_DAYS, gt=0)

    @field_validator("time_to_healthy_s", "api_p99_s")
    @classmethod
    def known_subjects(cls, value: dict[str, float], info) -> dict[str, float]:
        known = COMPONENTS if info.field_name == "time_to_healthy_s" else SLO_CLASSES
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise ValueError(f"unknown {unknown}; name some of {', '.join(known)}")
        if any(not v > 0 for v in value.values()):
            raise ValueError("every value must be positive")
        defaults = _default_time_to_healthy() if info.field_name == "time_to_healthy_s" else \
            Objectives.model_fields["api_p99_s"].default_factory()
        return {**defaults, **value}  # a policy may set some subjects; the others keep their defaults

    def for_measure(self, name: str, subject: str | None = None) -> float | None:
        """The objective for one measurement (None for a subject the policy does not know)."""
        if name not in MEASURES:
            raise KeyError(f"no objective for {name!r}; measures: {', '.join(MEASURES)}")
        value = getattr(self, name)
        if isinstance(value, dict):
            return value.get(subject or "")
        return float(value)


_active: Objectives | None = None


def set_active(objectives: Objectives | None) -> None:
    """The objectives `pytest --policy` judges scenarios by (the plugin sets them once per session)."""
    global _active
    _active = objectives


def active() -> Objectives:
    """The session's objectives: the policy's, or the defaults when no --policy was given."""
    return _active if _active is not None else Objectives()
