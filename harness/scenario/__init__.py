"""What scenarios share: where components run, waiting for health, watching the load balancer, recording verdicts."""

from harness.scenario.helpers import (allowed_s, exits_within, explain_all, judge, lb_takes_back_s,
                                      least_backed_off_host, wait_all_healthy, wait_healthy, wait_lb_marks_down,
                                      wait_recorded, watching_lb_marks_down)

__all__ = ["allowed_s", "exits_within", "explain_all", "judge", "lb_takes_back_s", "least_backed_off_host",
           "wait_all_healthy", "wait_healthy", "wait_lb_marks_down", "wait_recorded", "watching_lb_marks_down"]
