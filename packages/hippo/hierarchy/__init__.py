"""The memory hierarchy and lifecycle: messages -> episodes -> semantics -> themes, decay and consolidation.

* :mod:`.episodes`, :mod:`.semantics`, :mod:`.themes`: the four-level structure of seed 001 §3.2, maintained
  incrementally from the CURRENT buffer of unconsolidated messages (seed 003 §3.3);
* :mod:`.topdown`: top-down recall, Stage I representative selection (seed 001 Eq. 4) and Stage II
  uncertainty-gated expansion (seed 001 §3.3);
* :mod:`.decay`, :mod:`.policies`, :mod:`.consolidate`: power-law strength, lifecycle policies and light / deep /
  archival consolidation (seed 004 §8-10, §14);
* :mod:`.gate`: the optional encoding gate (seed 002 §4.1 stage 1);
* :mod:`.topics`: topic documents (seed 003 §3.2).

Importing this package is cheap: :mod:`hippo.config` imports :mod:`.config` from here, so nothing heavier may be
imported at package level.
"""
