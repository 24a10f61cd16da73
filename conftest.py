"""Top-level conftest: loads Quorum's pytest plugin for tests/ and scenarios/ alike."""

pytest_plugins = ["fixtures.plugin"]
