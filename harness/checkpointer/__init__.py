"""Quorum's pod checkpointer (issue #23): keeps a self-hosted control plane's pods alive on a node while the API
cannot, as the bootkube/Lokomotive pod-checkpointer does (docs/checkpointer.md). It runs inside the nodes, so it
uses the standard library only (tests/unit/test_checkpointer_state.py checks the imports)."""
