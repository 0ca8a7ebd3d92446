"""Layer 3: the per-namespace co-index (seed 000 §3): Content and Signature DWMs over the token stream, the span
table, and the candidate channels searched over them (BM25 from DWM counts, Hamming-ball signatures, embedding
codes). Rebuildable from the store at any time."""
