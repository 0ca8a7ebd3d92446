"""The saved form of a namespace's derived state: what every follower of :class:`~hippo.engine.state.NamespaceState`
needs to answer right after a restart, without re-reading or re-analysing the messages.

Each follower is one blob in the store's ``units`` table, written together in one transaction:

=====================  ======================================================================================
``derived.index``      the co-index's span table (the Content stream itself is read back from the chunks), the
                       words it writes in several tokens (where a question's misspellings are looked for) and
                       the time-and-truth annotations (:mod:`hippo.engine.truth.state`)
``derived.life``       the lifecycle: the complete hierarchy (codes, units, kNN lists, themes) and every
                       strength record (:mod:`hippo.engine.lifecycle`)
``derived.access``     strength records accessed since ``derived.life`` was written (recall reinforces what it
                       returns): saved alone while nothing else changed, a few kilobytes instead of the lifecycle
``derived.profiles``   the speaker profiles (:mod:`hippo.engine.profiles`)
=====================  ======================================================================================

A blob is the checksummed container of :mod:`hippo.store.snapshot` whose header names this module's ``FORMAT``, its
kind, the settings it was built under and the store fingerprint it reflects (generation, next seq, version of the
change feed). A loader applies only what changed after that version (:meth:`hippo.store.base.Store.changes`); a
blob that fails its checksum, has another format or other settings, or lies beyond the feed's reach is ignored and
the follower is rebuilt from the messages: never fatal.

``derived.life`` and ``derived.access`` carry an id of their save in the header (``save_id``, ``id``): a handle
writes them only over the blobs it last loaded or wrote (:func:`hippo.store.snapshot.head`, the ``expect`` of
:meth:`~hippo.store.base.Store.put_units_many`), and merges what another handle saved first
(:meth:`hippo.engine.lifecycle.Life.merge_saved`), so no handle's accesses replace another's.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from typing import Any, NamedTuple

import numpy as np

from hippo.base.errors import CorruptData
from hippo.store import snapshot
from hippo.store.base import NamespaceState as Fingerprint

log = logging.getLogger("hippo.engine")

FORMAT = 1
INDEX, LIFE, ACCESS, PROFILES = "derived.index", "derived.life", "derived.access", "derived.profiles"
KINDS = (INDEX, LIFE, ACCESS, PROFILES)
LEGACY = ("hierarchy", "decay")  # the lifecycle's blobs before FORMAT 1 (loaded once, then replaced)
_LEVEL = 1                        # zlib level: snapshots are rewritten often, inflating is fast at any level


def settings(value: Any) -> Any:
    """A JSON-comparable form of a settings dataclass (or dict / tuple of them)."""
    if hasattr(value, "__dataclass_fields__"):
        value = asdict(value)
    return json.loads(json.dumps(value, sort_keys=True, default=repr))


#: A blob written last by a state and at least this large is read back at its next save, to copy the deflated pieces
#: that did not change (:func:`hippo.store.snapshot.dump`); a smaller one is deflated whole again, faster than read.
REUSE_BYTES = 1 << 20


class Pieces(NamedTuple):
    """For :func:`encode`: ``reuse`` the pieces of the blob of ``kind`` written before and that blob (or None), and
    ``made`` where the pieces of the new blob are recorded under ``kind``."""
    kind: str
    reuse: tuple[snapshot.Pieces, bytes | snapshot.Blob] | None
    made: dict[str, snapshot.Pieces]


def encode(kind: str, fp: Fingerprint, meta: dict[str, Any], arrays: dict[str, np.ndarray],
           config: Any = None, pieces: Pieces | None = None) -> snapshot.Blob:
    """The blob of ``kind``: a :class:`snapshot.Blob` (written to a temporary file as it is deflated, and to the store
    a chunk at a time: a large snapshot is never held whole), to be closed by the caller."""
    head = {"format": FORMAT, "kind": kind, "covers": [fp.generation, fp.next_seq, fp.version],
            "config": config, "body": meta}
    out: list[snapshot.Pieces] = []
    reuse = pieces.reuse if pieces is not None else None
    blob = snapshot.Blob.dump(head, arrays, level=_LEVEL, reuse=reuse, pieces=out)
    if pieces is not None:
        pieces.made[pieces.kind] = out[0]
    return blob


def decode(blob: bytes, kind: str, config: Any = None, any_settings: bool = False
           ) -> tuple[Fingerprint, dict[str, Any], dict[str, np.ndarray]]:
    """``(fingerprint covered, meta, arrays)`` of a blob; raises :class:`CorruptData` when it cannot be used (built
    under other settings than ``config``, unless ``any_settings``)."""
    head, arrays = snapshot.load(blob)
    if head.get("format") != FORMAT:
        raise CorruptData(f"{kind}: format {head.get('format')} is not {FORMAT}")
    if head.get("kind") != kind:
        raise CorruptData(f"{kind}: the blob holds {head.get('kind')!r}")
    if not any_settings and head.get("config") != config:
        raise CorruptData(f"{kind}: built with other settings")
    covers = head.get("covers")
    if not (isinstance(covers, list) and len(covers) == 3 and all(isinstance(x, int) for x in covers)):
        raise CorruptData(f"{kind}: bad header")
    body = head.get("body")
    if not isinstance(body, dict):
        raise CorruptData(f"{kind}: bad header")
    return Fingerprint(*covers), body, arrays


def split(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """The arrays stored under ``prefix + "."``, without the prefix."""
    n = len(prefix) + 1
    return {k[n:]: v for k, v in arrays.items() if k.startswith(prefix + ".")}


def join(**parts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {f"{prefix}.{k}": v for prefix, arrays in parts.items() for k, v in arrays.items()}
