"""Layer 1: text. The lossless cl100k tokenizer, normalisation and stemming, term patterns over token ids, time
expressions, attribute statements, salience, query analysis and content key data. Pure functions of text; no
state, no storage."""
