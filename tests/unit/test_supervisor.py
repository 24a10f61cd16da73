"""Quorum's keeper (harness/backends/process/supervisor.py) as a scale uses it: a keeper configured held starts
nothing until it is released, and it runs the command line its spec holds at each start, so a spec rewritten while
the component runs takes effect at its next start; a hold that lands while the keeper waits out a back-off keeps the
component down. A real keeper process, its child a real `sleep`."""

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from harness.backends.process.supervisor import Control, KeeperSpec


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


def _eventually(condition, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_keeper_configured_held_starts_its_component_only_when_released_and_reads_its_line_at_each_start(tmp_path):
    control = tmp_path / "components" / "thing@h1"
    spec = KeeperSpec(component_id="thing@h1", argv=["sleep", "300"], netns="", hostname="", policy="always",
                      backoff_s=0.1, max_backoff_s=0.1, log=str(tmp_path / "thing.log"),
                      events=str(tmp_path / "events.jsonl"))
    spec.save(control)
    keeper = Control(control)
    keeper.hold()
    process = subprocess.Popen([sys.executable, "-m", "harness.backends.process.supervisor", str(control)],
                               start_new_session=True)
    try:
        assert _eventually(lambda: (control / "keeper.pid").exists())
        time.sleep(1.0)
        assert keeper.child_pid() is None, "a held keeper started its component"
        keeper.release()
        keeper.kick()
        assert _eventually(lambda: keeper.child_pid() is not None)
        first = keeper.child_pid()
        assert _cmdline(first) == ["sleep", "300"]
        replace(spec, argv=["sleep", "301"]).save(control)  # what a scale's reconfigure does, then a restart
        os.kill(first, signal.SIGKILL)
        assert _eventually(lambda: keeper.child_pid() not in (None, first))
        assert _cmdline(keeper.child_pid()) == ["sleep", "301"]
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(20)
    assert keeper.child_pid() is None


def test_a_hold_that_lands_during_the_back_off_keeps_the_component_down_until_released(tmp_path):
    """A component that exited by itself, then held while its keeper waits out the back-off (an etcd member that
    crashed, then held by a fault): the keeper must not start it when the back-off ends."""
    control, events = tmp_path / "components" / "thing@h1", tmp_path / "events.jsonl"
    KeeperSpec(component_id="thing@h1", argv=["sleep", "300"], netns="", hostname="", policy="always",
               backoff_s=5.0, max_backoff_s=5.0, log=str(tmp_path / "thing.log"), events=str(events)).save(control)
    keeper = Control(control)
    process = subprocess.Popen([sys.executable, "-m", "harness.backends.process.supervisor", str(control)],
                               start_new_session=True)
    try:
        assert _eventually(lambda: keeper.child_pid() is not None)
        first = keeper.child_pid()
        os.kill(first, signal.SIGKILL)  # exits by itself: once the keeper records the exit, it waits its back-off
        assert _eventually(lambda: events.exists() and '"event": "exit"' in events.read_text())
        keeper.hold()  # during the 5 s back-off
        time.sleep(6.0)  # past it
        assert keeper.child_pid() is None, "a component held during its back-off was started"
        keeper.release()
        keeper.kick()
        assert _eventually(lambda: keeper.child_pid() not in (None, first))
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(20)
    assert keeper.child_pid() is None


def test_a_kill_meets_the_first_back_off_once_the_last_start_is_a_stable_run_old(tmp_path):
    import json
    import time

    from harness.backends.process import supervisor
    from harness.backends.process.target import ProcessTarget

    target = object.__new__(ProcessTarget)  # only its run directory's events are read
    target.run_dir = tmp_path
    now = time.monotonic()
    lines = [{"t": now - 300, "component": "kube-scheduler@c1", "event": "start"},
             {"t": now - 10, "component": "kube-scheduler@c1", "event": "start"},
             {"t": now - supervisor.STABLE_AFTER_S - 1, "component": "kube-scheduler@c2", "event": "start"},
             {"t": now - 1, "component": "kube-scheduler@c2", "event": "exit"}]
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    waited = target.back_off_reset_in_s("kube-scheduler", "c1")
    assert supervisor.STABLE_AFTER_S - 11 < waited <= supervisor.STABLE_AFTER_S - 10
    assert target.back_off_reset_in_s("kube-scheduler", "c2") == 0.0
    assert target.back_off_reset_in_s("kube-scheduler", "c3") == 0.0
