"""The memory hierarchy (seed 001 §3.2): messages -> episodes -> semantics -> themes, codes and kNN graphs, and the
power-law strengths of seed 004 §8. Data structures only: the engine above decides when they change."""
