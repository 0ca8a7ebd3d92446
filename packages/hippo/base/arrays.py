"""An append-only numpy column with amortized doubling, shared by the co-index and its annotations."""

from __future__ import annotations

import numpy as np


class GrowArray:
    """``a[:n]`` holds the values; slots past ``n`` hold ``fill`` until they are used."""

    __slots__ = ("a", "n", "fill")

    def __init__(self, dtype, cap: int = 64, fill=0) -> None:
        self.fill = fill
        self.a = np.full(cap, fill, dtype=dtype)
        self.n = 0

    def _reserve(self, need: int) -> None:
        if need > self.a.size:
            b = np.full(max(need, 2 * self.a.size), self.fill, dtype=self.a.dtype)
            b[: self.n] = self.a[: self.n]
            self.a = b

    def extend(self, values) -> None:
        values = np.asarray(values, dtype=self.a.dtype)
        need = self.n + values.size
        self._reserve(need)
        self.a[self.n : need] = values
        self.n = need

    def resize(self, n: int) -> None:
        """Grow to ``n`` values; the new ones are ``fill`` until written."""
        self._reserve(n)
        self.n = max(self.n, n)

    @property
    def view(self) -> np.ndarray:
        return self.a[: self.n]
