"""What a Quorum run can leave on the machine, so tests can assert that nothing is left."""

from harness.net import netns
from harness.backends.process.teardown import keeper_pids
from harness.shell import run


def quorum_leftovers(run_id: str | None = None) -> list[str]:
    tag = run_id or ""
    found = [f"netns {n}" for n in netns.list_netns() if n.startswith(netns.PREFIX_NETNS + tag)]
    links = run(["ip", "-o", "link", "show"]).splitlines()
    names = [line.split(": ")[1].split("@")[0] for line in links if ": " in line]
    found += [f"link {n}" for n in names if n.startswith((netns.PREFIX_BRIDGE + tag, netns.PREFIX_VETH + tag))]
    found += [f"rule {' '.join(r)}" for r in netns.leftover_rules() if f"quorum:{tag}" in " ".join(r)]
    if run_id is None:
        found += [f"keeper pid {pid}" for pid in keeper_pids()]
    return found
