"""The objectives: what the user needs each measured property to be, in the promotion policy (gate.yaml,
`objectives:`). Each default follows from upstream defaults and published SLOs (shared ANCHORS.md, copied with
their sources into docs/gate.md), never from the cluster under test; each measure's record says where its default
comes from (catalog.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from harness.objectives.catalog import COMPONENTS, MEASURES, SLO_CLASSES


def default(name: str) -> float | dict[str, float]:
    """The measure's default objective (catalog.py), a fresh copy for a measure kept per subject."""
    value = MEASURES[name].default
    return dict(value) if isinstance(value, dict) else value


class Objectives(BaseModel):
    """Each field is the objective for the measure of the same name (harness/objectives/catalog.py)."""

    # numbers only (not "1.5", not true) and finite: an .inf objective would let every figure pass
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    time_to_healthy_s: dict[str, float] = Field(default_factory=lambda: default("time_to_healthy_s"))
    lease_failover_s: float = Field(default("lease_failover_s"), gt=0)
    lease_give_up_s: float = Field(default("lease_give_up_s"), gt=0)
    reconcile_s: float = Field(default("reconcile_s"), gt=0)
    bind_s: float = Field(default("bind_s"), gt=0)
    reconcile_after_failover_s: float = Field(default("reconcile_after_failover_s"), gt=0)
    bind_after_failover_s: float = Field(default("bind_after_failover_s"), gt=0)
    node_not_ready_s: float = Field(default("node_not_ready_s"), gt=0)
    lb_detection_s: float = Field(default("lb_detection_s"), gt=0)
    lb_detection_hung_s: float = Field(default("lb_detection_hung_s"), gt=0)
    etcd_leader_change_s: float = Field(default("etcd_leader_change_s"), gt=0)
    etcd_write_stall_s: float = Field(default("etcd_write_stall_s"), gt=0)
    availability_pct: float = Field(default("availability_pct"), ge=0, le=100)
    lost_writes: int = Field(default("lost_writes"), ge=0)
    api_p99_s: dict[str, float] = Field(default_factory=lambda: default("api_p99_s"))
    nodes_not_ready: int = Field(default("nodes_not_ready"), ge=0)
    pod_startup_s: float = Field(default("pod_startup_s"), gt=0)
    power_loss_recovery_s: float = Field(default("power_loss_recovery_s"), gt=0)
    snapshot_restore_s: float = Field(default("snapshot_restore_s"), gt=0)
    checkpoint_refresh_s: float = Field(default("checkpoint_refresh_s"), gt=0)
    certificate_days_left: float = Field(default("certificate_days_left"), gt=0)
    capacity_headroom_x: float = Field(default("capacity_headroom_x"), gt=0, le=1000)

    @field_validator("time_to_healthy_s", "api_p99_s")
    @classmethod
    def known_subjects(cls, value: dict[str, float], info) -> dict[str, float]:
        known = COMPONENTS if info.field_name == "time_to_healthy_s" else SLO_CLASSES
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise ValueError(f"unknown {unknown}; name some of {', '.join(known)}")
        if any(not v > 0 for v in value.values()):
            raise ValueError("every value must be positive")
        defaults = default(info.field_name)
        return {**defaults, **value}  # a policy may set some subjects; the others keep their defaults

    def for_measure(self, name: str, subject: str | None = None) -> float | None:
        """The objective for one measurement (None for a subject the policy does not know)."""
        if name not in MEASURES:
            raise KeyError(f"no objective for {name!r}; measures: {', '.join(MEASURES)}")
        value = getattr(self, name)
        if isinstance(value, dict):
            return value.get(subject or "")
        return float(value)
