"""Whether the control plane's memberships agree at every step of a scale (harness/faults/scale.py observes the
shapes, the scenario records each as a `membership` event): the apiservers the load balancer sends clients to,
etcd's voters, the controllers, the lease holders. Pure over the History, like every checker."""

from __future__ import annotations

from harness.checkers.verdict import Status, Verdict, checker
from harness.history import History

SHAPE = "membership"  # the event a scenario records for each observed shape


def disagreements(shape: dict) -> list[str]:
    """What is out of line in one observed shape. At every step: no apiserver in the load balancer's rotation on a
    host without an etcd voter (its apiserver would serve while its member is gone), no voter on a host that is no
    controller, no lease held on one, every voter answering (a silent one counts towards etcd's quorum without
    serving it, as a member added as a voter before it runs does; a learner does not count). Once a step settled:
    voters, rotation and controllers the same hosts, no learner left, every lease held."""
    controllers, voters, rotation = set(shape["controllers"]), set(shape["voters"]), set(shape["rotation"])
    found = [f"the load balancer sends clients to {host}'s apiserver, but {host} is no etcd voter"
             for host in sorted(rotation - voters)]
    found += [f"etcd voter {host} runs on no controller" for host in sorted(voters - controllers)]
    silent = shape.get("silent_voters") or []
    answering, quorum = len(voters) - len(silent), len(voters) // 2 + 1
    spare = answering - quorum
    consequence = ("quorum is lost" if spare < 0 else "one more failure loses quorum" if spare == 0
                   else f"only {spare} more failures are tolerated")
    found += [f"etcd voter {host} does not answer: {answering} of {len(voters)} voters answer against a quorum of "
              f"{quorum}, so {consequence}" for host in silent]
    holders = shape.get("holders") or {}
    found += [f"the {lease} lease is held on {host}, which is no controller"
              for lease, host in sorted(holders.items()) if host is not None and host not in controllers]
    if shape.get("settled"):
        if voters != controllers:
            found.append(f"etcd's voters {sorted(voters)} are not the controllers {sorted(controllers)}")
        if rotation != controllers:
            found.append(f"the load balancer's rotation {sorted(rotation)} is not the controllers "
                         f"{sorted(controllers)}")
        found += [f"{host} is still an etcd learner" for host in shape.get("learners", [])]
        found += [f"the {lease} lease has no holder" for lease, host in sorted(holders.items()) if host is None]
    return found


@checker("membership")
def membership_agreed(history: History) -> Verdict:
    """Every recorded shape (SHAPE events) agrees (disagreements); unknown when nothing was recorded."""
    shapes = [event.attrs for event in history.events_of(SHAPE)]
    if not shapes:
        return Verdict("membership", Status.UNKNOWN, "no step of the scale was observed", {})
    problems = {shape["when"]: found for shape in shapes if (found := disagreements(shape))}
    figures = {"steps_observed": len(shapes), "disagreements": problems}
    if problems:
        when, found = next(iter(problems.items()))
        return Verdict("membership", Status.FAIL, f"after '{when}': {'; '.join(found)}"
                       + (f" (and after {len(problems) - 1} more steps)" if len(problems) > 1 else ""), figures)
    final = shapes[-1]
    return Verdict("membership", Status.PASS, f"controllers, etcd voters, the load balancer's rotation and the lease "
                   f"holders agreed after each of {len(shapes)} steps; at the end {', '.join(final['controllers'])}",
                   figures)
