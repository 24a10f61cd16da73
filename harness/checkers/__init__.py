"""Pure functions History -> Verdict. They never touch the cluster, so they can be re-run offline."""

from harness.checkers.verdict import Status, Verdict
from harness.checkers.availability import availability, write_outage
from harness.checkers.failover import exclusive_leadership, failover_time
from harness.checkers.durability import durability
from harness.checkers.lb import lb_detection
from harness.checkers.monotonic import monotonicity
from harness.checkers.restarts import restart_accounting

__all__ = ["Status", "Verdict", "availability", "failover_time", "exclusive_leadership", "durability", "lb_detection", "monotonicity", "restart_accounting", "write_outage"]
