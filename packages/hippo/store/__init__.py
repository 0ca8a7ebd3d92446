"""Layer 2: storage. The complete store contract (:mod:`.base`), the embedded SQLite store, the sealed-chunk codec,
metadata filters and the binary snapshot format of derived state. Knows nothing of indexes or the engine."""
