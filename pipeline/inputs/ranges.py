"""Arithmetic on a proposal's numbers, each a float or a triangular range (low, mode, high)."""

from __future__ import annotations

from schemas.proposal import Number, Range


def bounds(value: Number) -> tuple[float, float, float]:
    """(low, mode, high); a plain number is all three."""
    return (value.low, value.mode, value.high) if isinstance(value, Range) else \
        (value, value, value)


def scaled(value: Number, factor: float) -> Number:
    """A number or range times a constant (a triangular scales to a triangular)."""
    low, mode, high = (factor * b for b in bounds(value))
    return Range(low=low, mode=mode, high=high) if low < high else mode


def spread(value: Number) -> str:
    """The number as a source names it: the mode, and the range when there is one."""
    low, mode, high = bounds(value)
    return f"{mode:g}" if low == high else f"{mode:g} ({low:g} to {high:g})"


def sum_numbers(parts: list[Number]) -> Number:
    """Sum of numbers or ranges: bounds add (a conservative, fully correlated range)."""
    if not any(isinstance(p, Range) for p in parts):
        return float(sum(p for p in parts if not isinstance(p, Range)))
    each = [bounds(p) for p in parts]
    return Range(low=sum(b[0] for b in each), mode=sum(b[1] for b in each),
                 high=sum(b[2] for b in each))
