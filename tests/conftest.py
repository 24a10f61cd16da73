# tests/data holds inputs for tests (e.g. stand-in scenarios that fail on purpose), not tests to collect
collect_ignore = ["data"]
