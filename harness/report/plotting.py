"""matplotlib as the report draws with it: no display, and labels drawn as the text they are. A label is a
scenario's node id or a measure's subject, which may hold a `$`: matplotlib's default would parse it as TeX math and
fail on what is not (a subject such as `$\\frac$`)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["text.parse_math"] = False
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["plt"]
