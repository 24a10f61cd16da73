"""The version skew policy over planned steps (harness/lifecycle/skew.py) and a whole upgrade's plan: which steps
it refuses, with which rule, before anything acts."""

import pytest

from harness.lifecycle.skew import (APISERVER_SKEW, NO_SKIPPED_MINOR, NOT_NEWER, ONE_OLDER, SAME_MAJOR, SkewViolation,
                                    check_step, upgrade_steps, violations)
from harness.lifecycle.upgrade import plan_upgrade
from harness.toolchain.versions import Version

N, N1, N2 = Version.parse("v1.34.4"), Version.parse("v1.35.4"), Version.parse("v1.36.3")
HOSTS = ("c1", "c2", "c3")


def cluster(version: Version = N) -> dict[str, Version]:
    return {f"{c}@{h}": version for c in ("kube-scheduler", "kube-controller-manager", "kube-apiserver") for h in HOSTS}


def refused(versions, component_id, to) -> str:
    with pytest.raises(SkewViolation) as caught:
        check_step(versions, component_id, to)
    assert caught.value.rule.says in caught.value.problem  # the policy's words are in the message
    return caught.value.rule.name


def test_the_policys_order_upgrades_every_apiserver_first_then_controller_managers_then_schedulers():
    steps = plan_upgrade(cluster(), N1)
    assert steps == [f"kube-apiserver@{h}" for h in HOSTS] + [f"kube-controller-manager@{h}" for h in HOSTS] + \
        [f"kube-scheduler@{h}" for h in HOSTS]
    assert upgrade_steps(list(reversed(list(cluster())))) == [*steps[:3][::-1], *steps[3:6][::-1], *steps[6:][::-1]]


def test_a_controller_manager_before_the_apiservers_is_refused_as_newer_than_an_apiserver():
    assert refused(cluster(), "kube-controller-manager@c1", N1) == NOT_NEWER.name
    assert refused(cluster(), "kube-scheduler@c2", N1) == NOT_NEWER.name
    # the whole plan is refused at its first step, before anything acts
    with pytest.raises(SkewViolation, match="kube-controller-manager@c1"):
        plan_upgrade(cluster(), N1, ["kube-controller-manager@c1", "kube-apiserver@c1"])


def test_one_apiserver_left_behind_keeps_a_controller_manager_on_the_new_release_refused():
    versions = {**cluster(), "kube-apiserver@c1": N1, "kube-apiserver@c2": N1}
    assert refused(versions, "kube-controller-manager@c1", N1) == NOT_NEWER.name
    check_step({**versions, "kube-apiserver@c3": N1}, "kube-controller-manager@c1", N1)  # all apiservers on N+1


def test_skipping_a_minor_is_refused_even_on_the_first_apiserver():
    assert refused(cluster(), "kube-apiserver@c1", N2) == NO_SKIPPED_MINOR.name
    with pytest.raises(SkewViolation, match=NO_SKIPPED_MINOR.name):
        plan_upgrade(cluster(), N2)
    assert refused(cluster(), "kube-apiserver@c1", Version(2, 0, 0)) == SAME_MAJOR.name


def test_apiservers_two_minors_apart_are_refused_when_a_step_would_make_them_so():
    versions = {**cluster(N1), "kube-apiserver@c1": N2}
    assert refused(versions, "kube-apiserver@c2", N) == APISERVER_SKEW.name


def test_a_controller_two_minors_behind_the_newest_apiserver_is_refused():
    versions = {**cluster(N1), "kube-scheduler@c1": N}
    assert refused(versions, "kube-apiserver@c1", N2) == ONE_OLDER.name
    assert [v.rule for v in violations({**versions, "kube-apiserver@c1": N2})] == [ONE_OLDER]


def test_a_rollback_in_reverse_order_is_allowed_and_apiservers_first_is_refused():
    upgraded = cluster(N1)
    assert refused(upgraded, "kube-apiserver@c1", N) == NOT_NEWER.name  # the controllers would be newer
    state = dict(upgraded)
    for step in reversed(plan_upgrade(cluster(), N1)):
        check_step(state, step, N)
        state[step] = N
    assert state == cluster(N)


def test_patch_releases_of_one_minor_mix_freely():
    versions = {**cluster(), "kube-apiserver@c1": Version.parse("v1.34.2")}
    check_step(versions, "kube-scheduler@c1", Version.parse("v1.34.9"))
    assert violations(versions) == []


def test_skew_the_cluster_already_had_is_not_held_against_an_unrelated_step():
    versions = {**cluster(), "kube-scheduler@c3": N1}  # already newer than the apiservers
    check_step(versions, "kube-apiserver@c1", N1)
    with pytest.raises(KeyError, match="kube-apiserver@c9"):
        check_step(versions, "kube-apiserver@c9", N1)


def test_a_controller_is_judged_against_the_apiservers_it_uses():
    """kubeadm's layout: each node's controller-manager and scheduler use their own node's apiserver, so `kubeadm
    upgrade apply` on the first node (its apiserver, then its controllers) keeps within the policy while the other
    apiservers still run the old release; through a load balancer the same state breaks it."""
    first_node = {**cluster(), "kube-apiserver@c1": N1, "kube-controller-manager@c1": N1, "kube-scheduler@c1": N1}
    local = {f"{c}@{h}": [h] for c in ("kube-controller-manager", "kube-scheduler") for h in HOSTS}
    assert violations(first_node, talks_to=local) == []
    shared = violations(first_node)
    assert {(v.rule, v.subject) for v in shared} == {(NOT_NEWER, "kube-controller-manager@c1"),
                                                     (NOT_NEWER, "kube-scheduler@c1")}
    ahead_of_its_own = {**cluster(), "kube-controller-manager@c2": N1, "kube-apiserver@c1": N1}
    assert [(v.rule, v.subject) for v in violations(ahead_of_its_own, talks_to=local)] == \
        [(NOT_NEWER, "kube-controller-manager@c2")]
    two_behind = {**cluster(N2), "kube-scheduler@c2": N}
    assert [(v.rule, v.subject) for v in violations(two_behind, talks_to=local)] == [(ONE_OLDER, "kube-scheduler@c2")]


def test_a_controller_whose_apiserver_is_down_is_held_to_no_rule_until_it_answers():
    restarting = {k: v for k, v in {**cluster(), "kube-controller-manager@c1": N1}.items() if k != "kube-apiserver@c1"}
    assert violations(restarting, talks_to={"kube-controller-manager@c1": ["c1"]}) == []
    assert [v.rule for v in violations(restarting)] == [NOT_NEWER]  # through a balancer: the others are older
