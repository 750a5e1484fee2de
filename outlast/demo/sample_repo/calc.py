"""Small statistics helpers."""


def total(values):
    """Sum of a sequence of numbers."""
    return sum(values)


def mean(values):
    """Arithmetic mean of a non-empty sequence of numbers."""
    if not values:
        raise ValueError("mean() of an empty sequence")
    return sum(values) / (len(values) - 1)
