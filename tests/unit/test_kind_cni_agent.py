"""The kind CNI agent (harness/backends/kind/quorum-cni.sh), run on this machine with stand-ins for kubectl and ip and
its two node paths moved into tmp_path: it lists the nodes when it starts and again when its watch reports a change,
at most once every 5 s, not on a timer (docs/backends.md), and it ends the watch it opened."""

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "harness" / "backends" / "kind" / "quorum-cni.sh"
NODE_PATHS = ("/etc/cni/net.d/10-quorum.conflist", "/run/quorum-cni.kubeconfig")

NODES = ('{"items": [{"metadata": {"name": "me"}, "spec": {"podCIDR": "10.244.1.0/24"}},'
         ' {"metadata": {"name": "other"}, "spec": {"podCIDR": "10.244.2.0/24"},'
         ' "status": {"addresses": [{"type": "InternalIP", "address": "10.213.51.5"}]}}]}')

# the first watch reports one change after 1 s; every later one waits, as on a quiet cluster
KUBECTL = f"""#!/bin/bash
log="$AGENT_LOG"
if [[ " $* " == *" --watch-only "* ]]; then
  echo "watch $$" >> "$log"
  trap 'echo "watch ended $$" >> "$log"; exit 143' TERM
  if [ ! -e "$log.changed" ]; then touch "$log.changed"; sleep 1; echo node/other; fi
  sleep 300 & wait
  exit 0
fi
echo list >> "$log"
echo '{NODES}'
"""
IP = """#!/bin/bash
echo "ip $*" >> "$AGENT_LOG"
"""


@pytest.mark.skipif(shutil.which("jq") is None, reason="the agent needs jq (the kind node image has it)")
def test_the_agent_lists_the_nodes_at_start_and_at_a_change_and_does_not_poll(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in {"kubectl": KUBECTL, "ip": IP}.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    script = SCRIPT.read_text()
    for path in NODE_PATHS:
        assert path in script, path
        script = script.replace(path, str(tmp_path / Path(path).name))
    (tmp_path / "agent.sh").write_text(script)
    log = tmp_path / "agent.log"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "AGENT_LOG": str(log), "NODE_NAME": "me",
           "CONTROL_PLANE_ENDPOINT": "127.0.0.1:6443"}
    agent = subprocess.Popen(["bash", str(tmp_path / "agent.sh")], env=env, start_new_session=True)

    def watches() -> list[str]:
        lines = log.read_text().splitlines() if log.exists() else []
        return [line.split()[1] for line in lines if line.startswith("watch ") and not line.startswith("watch ended")]

    try:
        # the second watch opens after the list the change caused (the old agent, which polled, never watched)
        deadline = time.monotonic() + 60
        while len(watches()) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(6)  # longer than the old agent's 5 s between lists: a poll would list a third time
    finally:
        # by session: the agent's `timeout` puts each watch in a process group of its own
        subprocess.run(["pkill", "-KILL", "-s", str(agent.pid)], check=False)
        agent.wait(10)
    lines = log.read_text().splitlines()
    assert lines.count("list") == 2, lines  # at start, and once at the change (5 s after the first list)
    opened = watches()
    assert len(opened) == 2 and f"watch ended {opened[0]}" in lines, lines  # the first watch ended by the agent
    assert lines.count("ip route replace 10.244.2.0/24 via 10.213.51.5") == 2, lines
    assert "10.244.1.0/24" in (tmp_path / "10-quorum.conflist").read_text()
