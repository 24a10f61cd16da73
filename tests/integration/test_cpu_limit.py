"""The CPU limit of the apiserver-cpu-starved twin, on this machine's cgroup v1 cpu controller: a process started
through the keeper's hook runs inside the quota, and the run's teardown leaves no cgroup behind."""

import subprocess
import time
from pathlib import Path

from harness.backends.process import cpu_limit


def test_a_limited_process_runs_inside_its_quota_and_teardown_removes_the_cgroup():
    run_id = f"t{int(time.time() * 1000) % 10**8}"
    path = cpu_limit.create(run_id, "kube-apiserver@c1", 100)
    assert (path / "cpu.cfs_quota_us").read_text().strip() == "10000"
    busy = subprocess.Popen(["python3", "-c", "while True: pass"],
                            preexec_fn=lambda: cpu_limit.join_self_if_limited(str(path)))
    try:
        lines = [line.split(":", 2) for line in Path(f"/proc/{busy.pid}/cgroup").read_text().splitlines()]
        assert [where for _, controllers, where in lines if "cpu" in controllers.split(",")] == [
            f"/{path.relative_to(cpu_limit.ROOT)}"]
        time.sleep(2.0)
        throttled = dict(line.split() for line in (path / "cpu.stat").read_text().splitlines())
        assert int(throttled["nr_throttled"]) > 0, throttled  # a busy loop hits a 10 % quota in every period
        assert cpu_limit.remove(run_id) == [], "a cgroup with a process inside is kept"
    finally:
        busy.kill()
        busy.wait()
    time.sleep(0.2)
    assert cpu_limit.remove(run_id) == [f"cgroup {path}"] and not path.parent.exists()
