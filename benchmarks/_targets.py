"""How every benchmark line states its target and whether the run met it.

Each target line ends with ``MET`` or ``MISSED``, and the figure printed beside the
target is the one the target is about, in its direction: a ratio target shows that
ratio, an absolute target the measured value in the target's unit. A baseline that
only gives scale is printed as such, never as a ratio next to a target it has
nothing to do with.
"""

from __future__ import annotations


def verdict(value: float, op: str, bound: float) -> str:
    """``MET`` when `value` `op` `bound` holds (`op` is ``<=`` or ``>=``), else ``MISSED``."""
    if op == "<=":
        met = value <= bound
    elif op == ">=":
        met = value >= bound
    else:
        raise ValueError(f"unknown comparison {op!r}")
    return "MET" if met else "MISSED"


def against(value: float, op: str, bound: float, unit: str = "x", digits: int = 2) -> str:
    """``<value><unit> (target <op> <bound><unit>) MET|MISSED``, e.g. ``1.07x (target <= 1.1x) MET``.

    The verdict compares the unrounded value, so a value printed as the bound itself can
    still be MISSED by less than the last digit shown.
    """
    return f"{value:.{digits}f}{unit} (target {op} {bound:g}{unit}) {verdict(value, op, bound)}"
