"""A wheel of the harness carries the data files it reads next to its modules (kwok's stages, the kind CNI):
setuptools packs only what [tool.setuptools.package-data] names, and an editable install hides a gap."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_data_file_of_the_harness_is_declared_as_package_data():
    declared_patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    package = ROOT / "harness"
    declared = {path for pattern in declared_patterns["harness"] for path in package.glob(pattern)}
    data_files = {path for path in package.rglob("*")
                  if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts}
    assert data_files, "the harness has data files (kwok stages, kind CNI): the walk above is broken"
    assert data_files <= declared, f"add to [tool.setuptools.package-data] in pyproject.toml: {sorted(data_files - declared)}"
