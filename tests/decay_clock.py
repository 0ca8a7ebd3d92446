"""A clock the decay tests move by hand (the time messages are ingested at and the time strengths are read at), and
the short chat of two friends they consolidate."""

from __future__ import annotations


# two friends, a dog and a teapot: enough for episodes, semantics and themes
CONVO = [
    ("Ann", "I adopted a border collie named Pixel last weekend."),
    ("Bob", "My cat Mochi hates dogs, though."),
    ("Ann", "Pixel loves frisbees and long hikes in the hills."),
    ("Bob", "I started a pottery class at the community center."),
    ("Ann", "What are you making in the pottery class?"),
    ("Bob", "A blue glazed teapot for my grandmother's birthday."),
    ("Ann", "We hiked the Cascade ridge trail with Pixel yesterday."),
    ("Bob", "The teapot cracked in the kiln, so I'm making another one."),
]


class Clock:
    """``time()`` is ``t``; move it by setting ``t``."""

    def __init__(self, t: float) -> None:
        self.t = t

    def time(self) -> float:
        return self.t


def decay_clock(monkeypatch, t: float) -> Clock:
    """A :class:`Clock` at ``t`` that hippo's ingestion (``hippo.engine.prepare``) and decay
    (``hippo.engine.hierarchy.decay.now``) read, for the rest of the test."""
    import hippo.engine.prepare as prepare
    from hippo.engine.hierarchy import decay as decay_mod

    clock = Clock(t)
    monkeypatch.setattr(prepare, "time", clock)  # ingestion time
    monkeypatch.setattr(decay_mod, "now", lambda: clock.t)
    return clock
