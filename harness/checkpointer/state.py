"""What to do with each checkpoint, from what the node and the API say about its parent pod (pure; no I/O).

A checkpoint moves between states on every pass of the agent; its state's action says whether its manifest must be
in the kubelet's static directory (start), only in the inactive directory (stop), or gone with its secrets and
config maps (remove). The transitions follow the contract of bootkube's pod-checkpointer (docs/checkpointer.md):
activate when the parent is not running here and the API cannot say it should (API down, or the parent scheduled
but not running); deactivate once the parent runs here again; after the parent is deleted from the API, wait a grace
period, then collect. The checkpointer's own checkpoint always stays active, and when its parent is deleted every
other checkpoint is collected before it."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Action(enum.Enum):
    NONE = "none"
    START = "start"  # the manifest is in the kubelet's static manifest directory
    STOP = "stop"  # the manifest is only in the inactive directory
    REMOVE = "remove"  # the manifest, secrets and config maps are deleted


class Kind(enum.Enum):
    NEW = "new"  # seen in the API only: not checkpointed yet
    INACTIVE = "inactive"
    INACTIVE_GRACE = "inactive, parent deleted"
    ACTIVE = "active"
    ACTIVE_GRACE = "active, parent deleted"
    SELF = "self"  # the checkpointer's own checkpoint
    REMOVE = "remove"


ACTIONS = {Kind.NEW: Action.NONE, Kind.INACTIVE: Action.STOP, Kind.INACTIVE_GRACE: Action.STOP,
           Kind.ACTIVE: Action.START, Kind.ACTIVE_GRACE: Action.START, Kind.SELF: Action.START,
           Kind.REMOVE: Action.REMOVE}


@dataclass(frozen=True)
class Seen:
    """What one pass of the agent learned about a parent pod."""

    api_available: bool  # the API answered this pass
    api_parent: bool  # the API lists the parent pod on this node
    local_running: bool  # the container runtime runs the parent pod (not its checkpoint) here
    local_parent: bool  # the kubelet knows the parent pod


@dataclass(frozen=True)
class State:
    kind: Kind
    grace_ends: float | None = None  # for the two grace kinds: when the checkpoint is collected

    @property
    def action(self) -> Action:
        return ACTIONS[self.kind]


def _grace(state: State, now: float, seen: Seen) -> State:
    """A grace kind once its time is up: an inactive checkpoint is collected; an active one goes on as if it had
    been inactive (collected, unless the parent is still expected here)."""
    if now < state.grace_ends:
        return state
    if state.kind is Kind.ACTIVE_GRACE:
        return next_state(State(Kind.INACTIVE_GRACE, now), now, seen, 0.0)
    return State(Kind.REMOVE)


def next_state(state: State, now: float, seen: Seen, grace_s: float) -> State:
    """The state after one pass. `now` is any monotonic clock in seconds; `grace_s` how long a checkpoint whose parent
    the API deleted is kept."""
    kind = state.kind
    expected_here = not seen.api_available or seen.api_parent  # nothing says the parent should not run here
    if kind is Kind.REMOVE:
        return state
    if kind is Kind.NEW:  # a pod only the API knows of is not checkpointed until the node runs or knows it
        return next_state(State(Kind.INACTIVE), now, seen, grace_s) if seen.local_running or seen.local_parent \
            else state
    if kind is Kind.SELF:
        return state if expected_here else _grace(State(Kind.INACTIVE_GRACE, now + grace_s), now, seen)
    if expected_here:
        if seen.local_running:
            # the parent runs here; with the API down a grace period in course goes on
            return _grace(state, now, seen) if kind is Kind.INACTIVE_GRACE and not seen.api_available \
                else State(Kind.INACTIVE)
        if kind is Kind.ACTIVE_GRACE and not seen.api_available:
            return _grace(state, now, seen)
        return State(Kind.ACTIVE)
    if kind in (Kind.INACTIVE_GRACE, Kind.ACTIVE_GRACE):  # the parent is still deleted
        return _grace(state, now, seen)
    # the parent was just deleted: the grace period starts (0 s: it is already over)
    return _grace(State(Kind.ACTIVE_GRACE if kind is Kind.ACTIVE else Kind.INACTIVE_GRACE, now + grace_s), now, seen)


@dataclass(frozen=True)
class Plan:
    """The names to activate, deactivate and collect after one pass, in the order to apply them."""

    starts: list[str] = field(default_factory=list)
    stops: list[str] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)


@dataclass
class Checkpoints:
    """Every checkpoint the agent knows of on its node, by pod full name (namespace/name)."""

    grace_s: float
    states: dict[str, State] = field(default_factory=dict)
    self_name: str | None = None  # the checkpointer's own pod

    def learn(self, *, active: set[str], inactive: set[str], parents: set[str], self_name: str | None) -> None:
        """Checkpoints on disk (after a restart of the agent they are all it knows) and the parents the node or the
        API names; the checkpointer's own pod becomes the self checkpoint."""
        for name in sorted(active):
            self.states.setdefault(name, State(Kind.ACTIVE))
        for name in sorted(inactive):
            self.states.setdefault(name, State(Kind.INACTIVE))
        for name in sorted(parents):
            self.states.setdefault(name, State(Kind.NEW))
        if self_name is not None:
            self.self_name = self_name
            if self.states.get(self_name, State(Kind.NEW)).kind in (Kind.NEW, Kind.ACTIVE, Kind.INACTIVE):
                self.states[self_name] = State(Kind.SELF)

    def process(self, now: float, *, api_available: bool, api_parents: set[str], local_running: set[str],
                local_parents: set[str], superseded: set[str] = frozenset()) -> Plan:
        """One pass: each checkpoint's next state from what the API (when it answered) and the node said.
        `superseded` names checkpoints a Ready successor replaced: they are collected now; the checkpointer's own
        then only removes itself (its successor takes over every other checkpoint, as they are)."""
        def seen(name: str) -> Seen:
            return Seen(api_available, name in api_parents, name in local_running, name in local_parents)

        plan = Plan()
        own = self.self_name if self.self_name in self.states else None
        if own is not None and own in superseded:
            plan.removes.append(own)
            del self.states[own]
            self.self_name = None
            return plan
        if own is not None:
            state = next_state(self.states[own], now, seen(own), self.grace_s)
            self.states[own] = state
            if state.action is Action.STOP:  # the checkpointer stops: every checkpoint stops with it
                plan.stops.extend(sorted(n for n, s in self.states.items() if n != own and s.action is not Action.NONE))
                plan.stops.append(own)
                return plan
            if state.action is Action.REMOVE:  # its parent is gone for good: collect everything, itself last
                plan.removes.extend(sorted(n for n, s in self.states.items()
                                           if n != own and s.action is not Action.NONE))
                plan.removes.append(own)
                self.states = {n: s for n, s in self.states.items() if s.action is Action.NONE and n != own}
                self.self_name = None
                return plan
            plan.starts.append(own)
        for name in sorted(self.states):
            if name == own:
                continue
            before = self.states[name]
            after = State(Kind.REMOVE) if name in superseded else next_state(before, now, seen(name), self.grace_s)
            self.states[name] = after
            if after.action is not before.action:
                {Action.START: plan.starts, Action.STOP: plan.stops, Action.REMOVE: plan.removes}.get(
                    after.action, []).append(name)
            if after.action is Action.REMOVE:
                del self.states[name]
        return plan
