"""What the user needs: the objectives a promotion policy sets for each property the scenarios measure, the
catalog of those measurements, and judging a measured figure against its objective. The bounds that follow from
the cluster's own configuration (harness/thresholds.py, Target.restart_budget_s ...) stay the scenarios' second
check: consistent with its configuration, beside meets the objective."""
