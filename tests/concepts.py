"""A deterministic embedding for the adapter tests, the same on both sides of every comparison."""

from __future__ import annotations

import hashlib

# A deterministic embedding: words of one concept share a dimension, so "kitten" finds "cat" with no word in
# common (what hippo's lexical channel cannot do), and other words hash into the remaining dimensions.
CONCEPTS = [
    ("cat", "kitten", "feline", "tabby"),
    ("dog", "puppy", "canine", "beagle"),
    ("car", "automobile", "vehicle", "sedan"),
    ("pizza", "margherita", "calzone"),
    ("ocean", "sea", "marine", "tide"),
    ("music", "cello", "violin", "melody"),
]
DIMS = 24


def embed_texts(texts: list[str]) -> list[list[float]]:
    out = []
    for text in texts:
        v = [0.0] * DIMS
        for word in (w.strip(".,;:!?'\"()[]{}") for w in text.lower().split()):
            if not word:
                continue
            for c, group in enumerate(CONCEPTS):
                if word in group:
                    v[c] += 1.0
                    break
            else:
                v[len(CONCEPTS) + int(hashlib.md5(word.encode()).hexdigest(), 16) % (DIMS - len(CONCEPTS))] += 0.3
        v[-1] += 0.05  # never the zero vector
        out.append(v)
    return out


__all__ = ["CONCEPTS", "DIMS", "embed_texts"]
