"""Time and truth: event times, temporal intent, fact fingerprints, surprise, salience, updates and
contradictions (seed 002 §4.1 stages 3, 4 and 9; seed 003 §3.3). Everything here is derived from the stored text
and timestamps, so it is recomputed, never stored: a store written without it reads the same."""
