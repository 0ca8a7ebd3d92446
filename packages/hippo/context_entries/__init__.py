"""Building blocks of index entries (seed 004 §5-7): offline extraction of summaries and key data, and the part
of an entry's content relevant to a cue. :mod:`hippo.entries` puts them behind ``Memory``."""
