"""Which work-monitor namespaces `quorum heal` deletes: those of a harness that no longer runs, and, with --force,
those of a harness on another machine or of none Quorum can read (harness/monitors/work_leftovers.py)."""

import json
import os
import subprocess
import sys
from dataclasses import asdict

from kubernetes import client as k8s

from harness.monitors.work_probes import OWNER
from harness.monitors.work_leftovers import owner_of, why_left_alone
from harness.run.harness_process import Harness


def _namespace(annotations: dict[str, str] | None) -> k8s.V1Namespace:
    return k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name="quorum-work-abc123", annotations=annotations))


def _ended_harness() -> Harness:
    child = subprocess.run([sys.executable, "-c", "import json, dataclasses; from harness.run.harness_process import "
                            "Harness; print(json.dumps(dataclasses.asdict(Harness.this())))"],
                           capture_output=True, text=True, check=True)
    return Harness(**json.loads(child.stdout))


def test_the_owner_is_read_back_from_the_annotation_and_anything_else_is_no_owner():
    this = Harness.this()
    assert owner_of(_namespace({OWNER: json.dumps(asdict(this))})) == this
    assert owner_of(_namespace(None)) is None
    assert owner_of(_namespace({OWNER: "not json"})) is None
    assert owner_of(_namespace({OWNER: json.dumps({"pid": 1})})) is None  # not a Harness's fields


def test_a_live_harness_keeps_its_namespace_even_with_force():
    for force in (False, True):
        reason = why_left_alone(Harness.this(), force)
        assert reason is not None and "still running" in reason and str(os.getpid()) in reason


def test_a_harness_that_ended_on_this_machine_leaves_a_leftover():
    assert why_left_alone(_ended_harness(), force=False) is None


def test_another_machine_s_harness_or_none_is_deleted_only_with_force():
    elsewhere = Harness("another-machine", "boot", 4242, 1, "pytest scenarios")
    assert "--force" in why_left_alone(elsewhere, force=False)
    assert "--force" in why_left_alone(None, force=False)
    assert why_left_alone(elsewhere, force=True) is None
    assert why_left_alone(None, force=True) is None
