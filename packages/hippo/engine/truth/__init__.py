"""Time and truth (seed 002 §4.1 stages 3, 4 and 9; seed 003 §3.3): per-row event times, surprise, salience,
attribute facts and supersedes links, and the query-time reweighting that uses them. Derived from the stored text
and timestamps."""
