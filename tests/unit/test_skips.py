"""Each skip reason Quorum gives is read back as its kind (harness/scenario/skips.py): the gate judges by it."""

import pytest

from harness.scenario.skips import Skip, SkipKind, classify


@pytest.mark.parametrize("reason, skip", [
    ("not on --backend process: it needs static-pods (the control plane runs as kubelet static pods from manifests "
     "on each node's disk), which the process backend does not offer",
     Skip(SkipKind.LACKS, ("static-pods",))),
    ("not on --target inv.yaml: it needs releases (run ...), which ...; it needs etcd-data (etcd members' ...)",
     Skip(SkipKind.LACKS, ("releases", "etcd-data"))),
    ("lacks spare-host: roles: [spare]: this topology has none", Skip(SkipKind.LACKS, ("spare-host",))),
    ("not on this target: API load with a token kubeconfig (fix: give ...)", Skip(SkipKind.LACKS, ("target-support",))),
    ("nightly profile only (run with --profile nightly)", Skip(SkipKind.PROFILE)),
    ("destructive, and staging is not disposable (disposable: false): destructive scenarios never run on it",
     Skip(SkipKind.NOT_DISPOSABLE)),
    ("target staging is unhealthy (for 60 s): ['kube-apiserver@c1 down']", Skip(SkipKind.UNHEALTHY)),
    ("refused: outside the maintenance window 22:00-04:00 (fix: ...)", Skip(SkipKind.REFUSED)),
    ("the cluster runs v1.35.4 already: give --upgrade-to a newer release than that", Skip(SkipKind.OTHER)),
    ("not on --backend kind without the word that names it", Skip(SkipKind.OTHER)),
])
def test_every_skip_reason_is_read_back_as_its_kind(reason, skip):
    assert classify(reason) == skip
