"""Capacity: the production load a control plane must carry (expected.py), what each step of a rising load found
(steps.py), and where the cluster's limit is (knee.py). The headroom verdict is harness/checkers/capacity.py."""
