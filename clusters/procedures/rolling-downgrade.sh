#!/bin/sh
# The built-in example rollback: the upgrade's order backwards (schedulers, controller-managers, then apiservers),
# one host at a time, each answering on the old release before the next; so no controller is ever newer than an
# apiserver it talks to. Usage: rolling-downgrade.sh RELEASE (the release the cluster ran before).
set -eu
to=${1:?usage: rolling-downgrade.sh RELEASE}
for component in kube-scheduler kube-controller-manager kube-apiserver; do
    for host in ${HOSTS:-c1 c2 c3}; do
        quorum install "$component@$host" "$to"
    done
done
