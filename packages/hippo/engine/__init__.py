"""Layer 4: the memory engine. A :class:`~hippo.engine.state.NamespaceState` owns every follower of one namespace
(co-index, embedding codes, time-and-truth annotations, hierarchy and strengths, profiles, index entries); the
write path appends to the store's log and lets every follower apply the new rows; recall ranks, selects and packs.
Nothing here knows the public facade."""
