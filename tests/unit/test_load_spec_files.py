"""A load spec a user wrote by hand (docs/load.md, "Distributed") is read by the worker, the reader and the
locustfile: a bad one ends each with what is wrong and no traceback, before anything is written."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.load.spec import LoadSpecError, read_spec_file

ROOT = Path(__file__).resolve().parents[2]
GOOD = {"endpoint": "https://10.213.4.10:6443", "ca": "/ca", "cert": "/c", "key": "/k", "nodes": ["n"]}


@pytest.mark.parametrize("content, says", [
    (None, "cannot read the load spec"),
    ("{not json", "is not JSON"),
    (b"\xff\xfe\xff", "is not JSON"),
    (json.dumps({**GOOD, "rate_per_s": -1}), "rate_per_s"),
])
def test_a_bad_spec_file_says_what_is_wrong(tmp_path, content, says):
    path = tmp_path / "spec.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(LoadSpecError, match=says):
        read_spec_file(str(path))


def test_a_good_spec_file_is_read(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(GOOD))
    spec = read_spec_file(str(path))
    assert spec.endpoint == GOOD["endpoint"] and spec.nodes == ["n"]


@pytest.mark.parametrize("module", ["harness.load.reader", "harness.load.worker"])
def test_a_process_given_a_bad_spec_exits_with_the_reason_and_writes_nothing(tmp_path, module):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({**GOOD, "mix": {"get_secrets": 1}}))
    records, summary = tmp_path / "records.jsonl", tmp_path / "summary.json"
    done = subprocess.run([sys.executable, "-m", module, str(spec), str(records), str(summary)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1, done.stderr
    assert f"{module}: invalid load settings" in done.stderr and "unknown tasks in mix ['get_secrets']" in done.stderr
    assert "Traceback" not in done.stderr
    assert not records.exists() and not summary.exists()


@pytest.mark.parametrize("module", ["harness.load.reader", "harness.load.worker"])
def test_a_process_without_its_three_paths_prints_its_usage(module):
    done = subprocess.run([sys.executable, "-m", module, "spec.json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1 and f"usage: python -m {module} SPEC.json RECORDS" in done.stderr
    assert "SUMMARY.json" in done.stderr
    assert "Traceback" not in done.stderr
