"""Files that ``hippo ingest`` and ``hippo import`` read, turned into ``Memory.add_many`` items.

Formats, told apart by their content (never by the file name):

* **JSONL**: one JSON object per line, either a hippo message (``text`` plus any of ``speaker``, ``role``,
  ``timestamp``, ``session_id``, ``metadata``, ``priority``, ``event_time``) or an OpenAI-style message
  (``role`` and ``content``). A hippo export file (its first line the ``hippo-export`` header) is JSONL too.
* **OpenAI-style message lists**: a JSON list ``[{"role": ..., "content": ...}, ...]`` or an object
  ``{"messages": [...]}``. ``content`` may be a string or a list of content parts; an assistant's ``tool_calls``
  are kept as text and in ``metadata["tool_calls"]``; Anthropic's content blocks (``tool_use``, ``tool_result``)
  likewise. JSONL of such objects, a conversation a line (OpenAI's fine-tuning and batch files), is read line after
  line.
* **Agents' histories.** OpenAI Responses API items (``{"type": "message" | "function_call" |
  "function_call_output" | "reasoning" | "web_search_call" | ..., ...}``), a list or JSONL of them or a response
  saved whole (``{"object": "response", "output": [...]}``); a Claude Code session transcript (JSONL, ``{"type":
  "user" | "assistant" | "summary" | ..., "message", "uuid", "sessionId", "timestamp", ...}`` a line); LangChain
  messages as ``messages_to_dict`` or ``dumpd`` writes them; LlamaIndex's ``ChatMessage.model_dump()`` (``{"role",
  "blocks"}``). Tool calls and outputs are read as the OpenAI-style messages' are; an item or line with an id of its
  own is stored with its identity (:func:`source_id`), so a history that repeats it stores it once; a Responses
  item without one with a digest of its place among those with one (:class:`_ResponsesPlaces`).
* **BEAM** ``chat.json``: a list of batches ``{batch_number, time_anchor, turns: [[{role, id, content,
  time_anchor?}, ...], ...]}``, stored as the BEAM evidence measure defines it (``speaker`` = role, timestamp =
  the latest time anchor so far, ``session_id = "batch-<n>"``, ``metadata = {"chat_id": id}``).
* **LoCoMo**: a list of samples ``{sample_id, conversation: {session_<N>: [turns], session_<N>_date_time}}``
  (or one such sample).
* A JSON list of hippo messages.
* **Messaging apps.** A WhatsApp chat exported as text (``12/03/2024, 14:05 - Ann: text`` from Android,
  ``[12/03/2024, 14:05:33] Ann: text`` from iOS, the date and time as the phone's language writes them: Korean
  ``2024. 3. 11. 오후 9:00``, Chinese ``2024/3/11 下午9:00``, Arabic ``٢٤‏/٤‏/٢٠٢٢، ٢:٠٧ م``, ...; lines without a
  date continue the message before; the app's own
  notices and media placeholders are left out), and a Telegram export (``result.json``: ``{"messages": [{"type":
  "message", "date", "from", "text"}, ...]}``, text entities joined, service messages left out; or the result.json
  of a whole account, ``{"chats": {"list": [chat, ...]}, "left_chats": ...}``, every chat in one time line, each
  message's chat in its metadata and its group), and a Facebook
  Messenger or Instagram thread (``message_<n>.json`` of "Download your information": ``{"participants",
  "messages": [{"sender_name", "timestamp_ms", "content", ...}], "title", ...}``, newest first, its text repaired
  from the byte-by-byte Latin-1 escapes the export writes; calls, unsent messages, media without words and the
  app's notices left out; put in time order; the download of the end-to-end encrypted chats, ``<Name>_<n>.json``:
  ``{"participants", "threadName", "messages": [{"senderName", "timestamp", "text", "type", "isUnsent", "media",
  "reactions"}]}``, alike), and a Discord channel as DiscordChatExporter writes it in JSON
  (``{"guild", "channel", "messages": [{"id", "type", "timestamp", "author": {"name", "nickname"}, "content",
  "attachments", "reference", ...}]}``, system notices and messages without words left out), and a day of a Slack
  channel (``<channel>/<YYYY-MM-DD>.json`` of a workspace export: ``[{"type": "message", "user", "text", "ts",
  "user_profile", "subtype"?, "thread_ts"?}, ...]``, Slack's markup read as text, joins and other events left out),
  and a Google Chat conversation from Google Takeout (``messages.json``: ``{"messages": [{"creator", "created_date",
  "text", "message_id", ...}]}``), and a LINE chat exported as text (``[LINE] Chat history with Ann``, a line per day,
  ``09:05\tAnn\thello`` a message; notices and placeholders left out), and an iMessage conversation imessage-exporter
  wrote as text (time, sender, lines, a blank line), and a Signal chat's ``data.json`` as signal-export writes it
  (JSONL: ``{"date", "sender", "body", "quote", "reactions", "attachments", "deleted", ...}``) or its ``chat.md``
  (``[2024-03-12 09:05:33] Ann: text`` and two spaces, an empty line after each message), or as signalbackup-tools
  exports it as text (``[Mar 12, 2024 09:05:33] <Ann> text``).
* **Assistants.** The ``conversations.json`` of a ChatGPT data export (a list of conversations, each a ``mapping``
  of messages in a tree and its ``current_node``: the branch it shows is read, :func:`chatgpt_records`) or of a
  Claude.ai export (a list of ``{"uuid", "name", "chat_messages"}``, :func:`claude_records`), or the zip either
  hands over, whose ``conversations.json`` (or ``conversations-000.json``, ... of a large export) is read. Each
  conversation is a session (``session_id`` its id, its title in ``metadata["title"]``), each message stored with
  its role and its time, all conversations in one time line, each conversation its group (``--split``: a namespace
  per conversation); read a conversation at a time, never the whole document as objects. Their messages carry a
  digest and an identity (the conversation's id and the message's) like the chat apps' below.
* A chat app's message is stored with its sender as speaker and its time, without a session id: recall groups
  them into sittings by the pauses between them. ``timezone`` (``hippo ingest --timezone``) names the zone such an
  export was written in: the phone's wall-clock times are read on that zone's clock, the instants take its offset
  (:func:`in_zone`). Each such record carries its :func:`source_digest` (``Record.digest``), which ``hippo ingest``
  stores in the message's metadata and matches first when the same chat is ingested again.

A zip archive holding one such file (iOS exports a WhatsApp chat as a zip with ``_chat.txt``) is read as that file;
of several, the one named ``_chat.txt`` or named as the archive is the chat, the others documents sent in it.
A Slack workspace export, the zip Slack hands over (``users.json``, ``channels.json`` and a folder of day files per
channel), is read whole: every channel's days in one time line, each message's channel in its metadata and its
group (``--split`` gives each channel a namespace). An archive unpacks to at most :data:`MAX_UNZIPPED` bytes
(512 MiB), checked against the sizes it declares before anything is unpacked.

Every problem is reported as an ``InvalidInput`` that names the file, the line, and the field: for JSON documents
the line where the offending object starts and its path inside the document (``[3].turns[0][1]``). Those lines
are found only when something is wrong, by parsing the document again with a position-recording scanner, so
reading a good file costs one ``json.loads``.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import io
import json
import json.decoder
import json.scanner
import os
import posixpath
import re
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
import zoneinfo
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any, BinaryIO, Callable, Iterable, Iterator

from hippo import InvalidInput, NotFound
from hippo.base.timeutil import parse_iso, time_zone, with_utc_offset

EXPORT_FORMAT = "hippo-export"
EXPORT_VERSION = 1
# What an export line may carry into a new store: ids, seq and created_at are assigned again, as Memory.import_ does.
EXPORT_FIELDS = ("text", "speaker", "role", "timestamp", "session_id", "metadata")

# Most bytes one zip archive may unpack to (its chat file, or every file of a Slack export together). The sizes the
# archive declares are checked before anything is unpacked, and no more than they declare is ever read: a zip bomb,
# or a member that lies about its size, is refused without filling memory. A chat file beyond it is ingested unzipped.
MAX_UNZIPPED = 512 * 1024 * 1024

# Deepest nesting a record may have (metadata included): far beyond real metadata, far below where json and the
# store's own encoders run out of stack.
MAX_DEPTH = 100

_OPENAI_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system",
                 "tool": "tool", "function": "tool"}

Path = tuple  # keys and indexes from the document root to an object

# The metadata key under which ``hippo ingest`` stores a chat app message's :func:`source_digest`.
DIGEST_KEY = "source_digest"
# The metadata key under which it stores the identity of a message that an export names by an id of its own
# (Telegram, Discord, Slack, Google Chat, ChatGPT, Claude.ai; Messenger by its millisecond and words): the same after
# the message is edited (or its sender renamed), so a later export's edited version
# replaces the one stored (:func:`source_id`).
SOURCE_ID_KEY = "source_id"
# The metadata keys the readers of this module write from what a file says (with DIGEST_KEY and SOURCE_ID_KEY): the
# other keys of a stored message's metadata were set by its user (``Memory.update``: a tag, an event time), and
# go with it to the version of it a later export holds.
READ_KEYS = frozenset({
    DIGEST_KEY, SOURCE_ID_KEY, "attachments", "bot", "channel", "chat", "chat_id", "dia_id", "discord_id", "edited",
    "embeds", "forwarded_from", "from_id", "google_chat_id", "link", "pinned", "quote", "reactions", "reply_to",
    "sidechain", "slack_ts", "stickers", "telegram_id", "thread_ts", "tool_call_id", "tool_calls", "topic_id", "title",
    "chatgpt_id", "claude_id", "model", "via_bot"})


class SourceError(Exception):
    """A problem at one place of the document, before the file name and line are known."""

    def __init__(self, path: Path, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.message = message
        self.field = field


@dataclass(slots=True)
class Record:
    """One message to store, with where it came from."""

    item: dict[str, Any]
    path: Path = ()            # inside a JSON document; () for a JSONL line
    line: int | None = None    # known for JSONL; for documents found on demand
    group: str | None = None   # the LoCoMo sample (or the Slack channel) it belongs to
    origin: Source | None = None  # the file of an archive it was read from, when not the source's own text
    digest: str | None = None  # a chat app's record as the export wrote it (:func:`source_digest`)
    ident: str | None = None   # the message's identity, which an edit keeps (:func:`source_id`)


@dataclass
class Source:
    """A parsed input file."""

    file: str
    format: str                # "jsonl", "export", "messages", "beam", "locomo", "hippo", "whatsapp", "telegram",
                               # "telegram-export", "messenger", "discord", "slack", "slack-export", "google-chat",
                               # "line", "imessage", "signal", "chatgpt",
                               # "claude", "claude-code", "openai-responses", "langchain", "llamaindex"
    text: str
    records: list[Record] = field(default_factory=list)
    _offsets: dict[int, int] | None = None
    _root: Any = None
    _stream: Callable[[], Iterator[Record]] | None = None  # a file read as a stream (:func:`open_source`)

    def each(self) -> Iterator[Record]:
        """The records in the file's order: those read, or, for a file :func:`open_source` reads as a stream (its
        ``records`` left empty), a new pass over the file, parsed again one record at a time."""
        return iter(self.records) if self._stream is None else self._stream()

    def line_of(self, rec: Record | Path, field: str | None = None) -> int | None:
        """The line where a record's object starts (1-based), or where its key ``field`` is; None when unknown."""
        at = self.position(rec, field)
        return None if at is None else at[0]

    def position(self, rec: Record | Path, field: str | None = None) -> tuple[int, int | None] | None:
        """(line, column) of a record's object or of its key ``field``, 1-based; the column is None for JSONL lines
        (the line is the record)."""
        if isinstance(rec, Record):
            if rec.origin is not None and rec.origin is not self:
                return rec.origin.position(rec, field)
            if rec.line is not None:
                return rec.line, None
            path = rec.path
        else:
            path = rec
        if self._offsets is None:
            try:
                self._root, self._offsets = _parse_with_offsets(self.text)
            except (ValueError, RecursionError):
                self._offsets = {}
        obj = self._root
        try:
            for key in path:
                obj = obj[key]
        except (KeyError, IndexError, TypeError):
            return None
        at = self._offsets.get(id(obj))
        if at is None:
            return None
        if field is not None and isinstance(obj, dict) and field in obj:
            # the key's own line: the first occurrence of the quoted key after the object opens
            key = self.text.find(json.dumps(field), at)
            at = key if key >= 0 else at
        return self.text.count("\n", 0, at) + 1, at - (self.text.rfind("\n", 0, at) + 1) + 1

    def where(self, rec: Record | Path, field: str | None = None) -> str:
        """``file:line`` (``file:line:column`` inside a JSON document, plus the path to the object there), for
        error messages."""
        if isinstance(rec, Record) and rec.origin is not None and rec.origin is not self:
            return rec.origin.where(rec, field)
        path = rec.path if isinstance(rec, Record) else rec
        at = self.position(rec, field)
        out = self.file if at is None else f"{self.file}:{at[0]}" + (f":{at[1]}" if at[1] is not None else "")
        return f"{out}: {render_path(path)}" if path else out

    def error(self, rec: Record | Path, message: str, field: str | None = None) -> InvalidInput:
        return InvalidInput(f"{self.where(rec, field)}: {message}")


def source_digest(kind: str, raw: Any) -> str:
    """The identity of one record of a chat app's export, taken from what the export wrote and not from how hippo
    reads it: ``kind`` (the format) and ``raw``, the record's lines as written (a string) or the fields of its JSON
    object that say which message it is (a dict, the values as the file holds them). A later version that reads the
    same record otherwise (another date order, a link, a name) gives the same digest. ``"<kind>:<32 hex digits>"``."""
    data = raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True, separators=(",", ":"))
    digest = hashlib.blake2b(f"{kind}\n{data}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return f"{kind}:{digest}"


def source_id(kind: str, raw: dict[str, Any]) -> str:
    """The identity of one message of a chat app's export that names its messages by an id: ``raw``, the fields
    that name it and that an edit leaves as they were (its id, its sender's account, when it was sent), as the file
    holds them. Two versions of a message, before and after an edit, have the same identity and two digests
    (:func:`source_digest`). ``"<kind>:<32 hex digits>"``."""
    return source_digest(kind, raw)


def _picked(obj: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    return {k: obj[k] for k in keys if k in obj}


def render_path(path: Path) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else key)
    return out


# ------------------------------------------------------------------------------------------------- reading


_LINE_END = re.compile(r"\r\n|\r|\n")


def _iter_lines(text: str) -> Iterator[str]:
    """The lines of a file's text, one at a time (a file of a million lines is not held again as a list): ended by a
    newline, a carriage return and newline, or a lone carriage return. Not :meth:`str.splitlines`, which also breaks
    at U+2028, U+2029, U+0085 and form feeds: JSON lets a string hold them unescaped (``json.dumps(...,
    ensure_ascii=False)`` writes them so), and a chat's message may hold them."""
    start = 0
    for end in _LINE_END.finditer(text):
        yield text[start:end.start()]
        start = end.end()
    yield text[start:]


def read_text(file: str, encoding: str = "utf-8") -> str:
    """The file decoded with ``encoding``; a byte that does not decode is reported with its line and a hint."""
    return _read_file(file, encoding)[1]


def _unzipped(file: str, data: bytes) -> tuple[str, bytes]:
    """A zip archive's one chat file, named ``archive (member)``: iOS exports a WhatsApp chat as a zip holding
    ``_chat.txt`` (and the media, if asked for, documents of text among them). Anything else comes back as it is."""
    if not data.startswith(b"PK\x03\x04"):
        return file, data
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [info for info in archive.infolist() if not info.is_dir()
                       and not info.filename.startswith("__MACOSX/")
                       and not posixpath.basename(info.filename).startswith(".")
                       and info.filename.lower().endswith((".txt", ".json", ".jsonl"))]
            if len(members) > 1:
                # a chat exported with its media holds the documents sent in it too, a text file among them: the
                # chat is the file iOS names _chat.txt, or the one Android names as the archive ("WhatsApp Chat
                # with Ann.zip" holding "WhatsApp Chat with Ann.txt")
                stem = os.path.splitext(os.path.basename(file))[0]
                chats = [info for info in members if posixpath.basename(info.filename) == "_chat.txt"
                         or os.path.splitext(posixpath.basename(info.filename))[0] == stem]
                members = chats if len(chats) == 1 else members
            if len(members) != 1:
                names = ", ".join(info.filename for info in members[:5]) + (", ..." if len(members) > 5 else "")
                raise InvalidInput(f"{file}: a zip archive with {'no' if not members else 'several'} chat files "
                                   f"(.txt, .json, .jsonl){': ' + names if members else ''}; unzip it and ingest "
                                   f"the one to read")
            return f"{file} ({members[0].filename})", _unpacked(file, archive, members[0], MAX_UNZIPPED)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, OSError, EOFError) as exc:
        raise InvalidInput(f"{file}: a damaged or unsupported zip archive: {exc}") from None


def _size(n: int, other: int | None = None) -> str:
    """``n`` bytes for people: "512 MiB", "3.2 GiB", "9,000 bytes"; exact when rounding would show it as ``other``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20)):
        if n >= scale:
            shown = f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
            return shown if other is None or shown != _size(other) else f"{n:,} bytes"
    return f"{n:,} bytes"


def _unpacked(file: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo, room: int) -> bytes:
    """The bytes of one member of ``archive``, refused (naming the member and :data:`MAX_UNZIPPED`) when they
    would be more than ``room``: by the size the archive declares, before unpacking, and by what unpacking gives,
    read no further than that (zipfile stops at the declared size and then checks the CRC)."""
    def refuse(size: str) -> InvalidInput:
        whole = "" if room == MAX_UNZIPPED else " with the archive's other files"
        return InvalidInput(f"{file} ({info.filename}): unpacks to {size}{whole}, more than the "
                            f"{_size(MAX_UNZIPPED, info.file_size)} hippo ingest unpacks from a zip archive; unzip it and ingest "
                            f"its files one at a time")

    if info.file_size > room:
        raise refuse(f"{_size(info.file_size, MAX_UNZIPPED)} (as the archive declares)")
    with archive.open(info) as member:
        data = member.read(room + 1)
    if len(data) > room:
        raise refuse(f"more than {_size(room, MAX_UNZIPPED)}")
    return data


def _read_file(file: str, encoding: str) -> tuple[str, str]:
    """(the name errors give the file, its text): :func:`read_text`, looking inside a zip archive."""
    _codec(encoding)
    file, data = _unzipped(file, _file_bytes(file))
    return file, _decode(file, data, encoding)


def _codec(encoding: str) -> codecs.CodecInfo:
    try:
        return codecs.lookup(encoding)
    except LookupError as exc:
        raise InvalidInput(f"--encoding {encoding!r} is not a known text encoding") from exc


@contextlib.contextmanager
def _opening(file: str) -> Iterator[None]:
    """The errors of opening or reading ``file`` as hippo's, naming it."""
    try:
        yield
    except FileNotFoundError as exc:
        raise NotFound(f"{file}: no such file") from exc
    except IsADirectoryError as exc:
        raise InvalidInput(f"{file}: is a directory, expected a file") from exc
    except OSError as exc:
        raise InvalidInput(f"{file}: cannot be read: {exc.strerror or exc}") from exc


def _file_bytes(file: str) -> bytes:
    with _opening(file):
        with open(file, "rb") as f:
            # A device is read whole like a file, and /dev/zero or /dev/urandom never end: read until memory ran out.
            # A pipe (`<(zcat chat.jsonl.gz)`, /dev/stdin fed by one) ends when its writer does.
            mode = os.fstat(f.fileno()).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                raise InvalidInput(f"{file}: is a device, expected a file (or a pipe)")
            return f.read()


def _decode(file: str, data: bytes, encoding: str) -> str:
    """The text of a file's bytes in ``encoding``; a byte that does not decode is reported with its line and a
    hint."""
    codec = _codec(encoding)
    # A UTF-8 byte-order mark (written by some Windows tools) is not part of the text. A UTF-16 or UTF-32 one names
    # the file's encoding outright (Windows tools save chats as "Unicode", UTF-16 with its mark), so under the
    # default encoding such a file is read in the one it names.
    name = "utf-8-sig" if codec.name == "utf-8" else codec.name
    if codec.name == "utf-8" and data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        name = "utf-32"
    elif codec.name == "utf-8" and data.startswith((b"\xff\xfe", b"\xfe\xff")):
        name = "utf-16"
    try:
        text = data.decode(name)
    except LookupError as exc:  # a codec of bytes to bytes ("rot13", "base64", "hex") is no text encoding
        raise InvalidInput(f"--encoding {encoding!r} is not a text encoding") from exc
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = data[exc.start:exc.start + 1].hex()
        hint = (_utf16_hint(data) or "; pass --encoding with the file's encoding, e.g. --encoding latin-1"
                if codec.name == "utf-8" else "; pass --encoding with the file's encoding")
        raise InvalidInput(f"{file}:{line}: byte 0x{bad} at column {column} is not valid {codec.name} "
                           f"text{hint}") from exc
    nul = text.find("\x00")
    if nul >= 0 and not name.startswith(("utf-16", "utf-32", "utf_16", "utf_32")):
        # No text file of a chat or of JSON holds NUL characters; UTF-16 without its mark read as one-byte text does
        hint = _utf16_hint(data) or "; pass --encoding with the file's encoding"
        raise InvalidInput(f"{file}:{text.count(chr(10), 0, nul) + 1}: holds NUL characters, so it is not "
                           f"{codec.name} text{hint}")
    return text


def _utf16_hint(data: bytes) -> str:
    """A hint naming UTF-16 when the file's bytes look like it (every other byte of its start NUL), else ''."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "; its byte-order mark says UTF-16: pass --encoding utf-16, or leave --encoding out"
    head = data[:4096]
    if len(head) < 2 or b"\x00" not in head:
        return ""
    odd, even = head[1::2].count(0), head[0::2].count(0)
    if max(odd, even) < len(head) // 4:
        return ""
    order = "utf-16-le" if odd > even else "utf-16-be"
    return f"; it looks like UTF-16 without a byte-order mark: pass --encoding {order}"


def read_source(file: str, *, encoding: str = "utf-8", timezone: str | tzinfo | None = None) -> Source:
    """Parse ``file`` in whichever supported format it holds; raises ``InvalidInput`` naming file, line, field.

    ``timezone`` (an IANA name such as "America/New_York", a fixed offset such as "+05:30", or a ``tzinfo``) is the
    zone a chat app export was written in: see :func:`in_zone`. Other formats refuse it."""
    zone = None if timezone is None else parse_zone(timezone)
    src = _read_source(file, encoding)
    if zone is not None:
        in_zone(src, zone, timezone if isinstance(timezone, str) else str(zone))
    return src


def _read_source(file: str, encoding: str) -> Source:
    _codec(encoding)
    with _opening(file):
        with open(file, "rb") as f:
            src = _assistant_zip(file, f, encoding)
    return src if src is not None else _source_of(file, _file_bytes(file), encoding)


def _assistant_zip(file: str, f: BinaryIO, encoding: str) -> Source | None:
    """A ChatGPT or Claude.ai export zip (:func:`_read_assistant_archive`) read from the open file ``f``, a regular
    file, without reading the archive whole: such a zip holds every image uploaded or made in its conversations,
    gigabytes of them beside a conversations.json of megabytes. None for another file."""
    if not stat.S_ISREG(os.fstat(f.fileno()).st_mode) or f.read(4) != b"PK\x03\x04":
        return None
    f.seek(0)
    return _read_assistant_archive(file, f, encoding)


def _source_of(file: str, data: bytes, encoding: str) -> Source:
    if data.startswith(b"PK\x03\x04"):
        archive = _read_slack_archive(file, data, encoding)
        if archive is not None:
            return archive
        archive = _read_assistant_archive(file, data, encoding)
        if archive is not None:
            return archive
    file, data = _unzipped(file, data)
    text = _decode(file, data, encoding)
    del data  # the text is all that is read from here on
    if not text.strip():
        raise InvalidInput(f"{file}: the file is empty; expected JSONL messages or a JSON document")
    lineno, first = next(_nonblank(_iter_lines(text)))
    if _signal_md(_iter_lines(text)):
        src = Source(file, "signal", text)
        src.records.extend(_signal_md_records(src, lambda: _iter_lines(text)))
        return src
    if _whatsapp_head(first):
        return _read_whatsapp(file, text)
    with_text = (line for line in _iter_lines(text) if line.strip())
    next(with_text)
    if _line_export(first, next(with_text, None)):
        return _read_line(file, text)
    if _imessage_head(first) is not None:
        src = Source(file, "imessage", text)
        src.records.extend(_imessage_records(src, lambda: _iter_lines(text)))
        return src
    if _signal_txt_head(first) is not None:
        src = Source(file, "signal", text)
        src.records.extend(_signal_txt_records(src, lambda: _iter_lines(text)))
        return src
    kind = _assistant_kind(text) if first.lstrip("\ufeff").lstrip().startswith("[") else None
    if kind is not None:
        return _read_assistant_export(file, text, kind)
    if first.lstrip().startswith("{"):
        try:
            head = json.loads(first)
        except (ValueError, RecursionError):
            head = None
        if _signal_line(head):
            src = Source(file, "signal", text)
            src.records.extend(_signal_records(src, lambda: _iter_lines(text)))
            return src
        if claude_code_line(head):
            src = Source(file, CLAUDE_CODE, text)
            src.records.extend(claude_code_records(src, lambda: _iter_lines(text)))
            return src
        if isinstance(head, dict) and not ("messages" in head or "conversation" in head or "chats" in head
                                           or _conversation_kind(head) is not None):
            return _read_jsonl(file, text)
        if isinstance(head, dict) and "messages" in head and text.strip() != first.strip():
            # a whole JSON object on the first line and more after it: no single document but JSONL of
            # conversations, one {"messages": [...]} a line (OpenAI's fine-tuning and batch files)
            return _read_jsonl_conversations(file, text)
    if first.lstrip("\ufeff").strip().replace('"', "").startswith("AuthorID,Author,Date,Content"):
        raise InvalidInput(f"{file}:{lineno}: a Discord channel exported by DiscordChatExporter as CSV, which hippo "
                           f"ingest does not read (its dates are written in the exporter's date format or locale, "
                           f"to the minute and without a zone): export the channel as JSON (--format Json in the "
                           f"command line, JSON in the app), which it reads")
    if not first.lstrip().startswith(("{", "[")):
        # Neither JSON (no document or line hippo reads starts otherwise) nor a chat export hippo knows: saying
        # "not valid JSON" of a text file would send the user looking for a JSON error that is not there
        raise InvalidInput(f"{file}:{lineno}: not a format hippo ingest reads: not JSON (which starts with {{ or [) "
                           f"and not a WhatsApp export (whose lines start with a date and time, e.g. '12/03/2024, "
                           f"14:05 - Ann: ...' or '[12/03/2024, 14:05:33] Ann: ...'); the line starts "
                           f"{first.strip()[:40]!r}")
    doc = _load_document(file, text)
    src = Source(file, "", text)
    try:
        src.format, src.records = _convert_document(doc)
        for rec in src.records:
            _check_depth(rec.item, rec.path)
    except SourceError as exc:
        raise src.error(exc.path, exc.message, exc.field) from None
    if not src.records:
        raise InvalidInput(f"{file}: the document holds no messages")
    return src


# ------------------------------------------------------------------------------------------------- streams

# the formats read one line at a time, so a file of them can be read as a stream, again for each pass
STREAMED_FORMATS = ("jsonl", "export", "messages", "whatsapp", "line", "imessage", "signal", "claude-code")
_CHUNK = 1 << 16


@contextlib.contextmanager
def open_source(file: str, *, encoding: str = "utf-8", timezone: str | tzinfo | None = None) -> Iterator[Source]:
    """:func:`read_source` for a file too large to hold: a WhatsApp, LINE, iMessage or Signal export or a JSONL file (of
    messages, of conversations, or a hippo export) comes back with ``records`` empty, and :meth:`Source.each` reads
    the file again for each pass, parsing one record at a time, so what is held is the record being read and not the
    file. A pass refuses a file that changed since it was opened (its size or modification time), and a whole pass
    that read other bytes than the first whole pass (a digest of them) raises ``InvalidInput`` at its end. A pipe
    (standard input, ``<(zcat chat.txt.gz)``), which cannot be read twice, is first copied to a temporary file,
    deleted when the block ends. Other formats (JSON documents, zip archives) are read whole, as :func:`read_source`
    reads them.
    """
    zone = None if timezone is None else parse_zone(timezone)
    codec = _codec(encoding)
    with contextlib.ExitStack() as cleanup:
        fd = _open_fd(file, cleanup)
        src = _stream_source(file, fd, codec, encoding)
        if src is None:
            with _opening(file), os.fdopen(os.dup(fd), "rb") as f:
                src = _assistant_zip(file, f, encoding)
            if src is None:
                src = _source_of(file, _fd_bytes(fd), encoding)
            if zone is not None:
                in_zone(src, zone, timezone if isinstance(timezone, str) else str(zone))
        elif zone is not None:
            name = timezone if isinstance(timezone, str) else str(zone)
            next(zoned(src, (), zone, name), None)  # a format without wall-clock times is refused now
            plain = src._stream
            src._stream = lambda: zoned(src, plain(), zone, name)
        yield src


def _open_fd(file: str, cleanup: contextlib.ExitStack) -> int:
    """A descriptor reading ``file`` from its start at any offset: the file's own, or a temporary copy of a pipe."""
    with _opening(file):
        fd = os.open(file, os.O_RDONLY)
    cleanup.callback(os.close, fd)
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return fd
    if stat.S_ISDIR(mode):
        raise InvalidInput(f"{file}: is a directory, expected a file")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise InvalidInput(f"{file}: is a device, expected a file (or a pipe)")
    try:
        spool = cleanup.enter_context(tempfile.TemporaryFile(prefix="hippo-ingest-"))
    except OSError as exc:
        raise InvalidInput(f"{file}: a pipe is copied to a temporary file (it is read twice), which cannot be "
                           f"made: {exc.strerror or exc}; set TMPDIR to a folder with room") from exc
    while True:
        try:
            chunk = os.read(fd, 1 << 20)
        except OSError as exc:
            raise InvalidInput(f"{file}: cannot be read: {exc.strerror or exc}") from exc
        if not chunk:
            break
        try:
            spool.write(chunk)
        except OSError as exc:
            raise InvalidInput(f"{file}: a pipe is copied to a temporary file (it is read twice), which cannot be "
                               f"written: {exc.strerror or exc}; set TMPDIR to a folder with room") from exc
    try:
        spool.flush()
    except OSError as exc:
        raise InvalidInput(f"{file}: a pipe is copied to a temporary file (it is read twice), which cannot be "
                           f"written: {exc.strerror or exc}; set TMPDIR to a folder with room") from exc
    return spool.fileno()


def _fd_bytes(fd: int) -> bytes:
    out = bytearray()
    while chunk := os.pread(fd, 1 << 20, len(out)):
        out += chunk
    return bytes(out)


class _Pass(io.RawIOBase):
    """One pass over a descriptor from its start (``os.pread``: passes share no offset), each byte fed to a digest."""

    def __init__(self, fd: int, digest: Any) -> None:
        super().__init__()
        self.fd, self.digest, self.at = fd, digest, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = os.pread(self.fd, len(buffer), self.at)
        buffer[:len(data)] = data
        self.at += len(data)
        self.digest.update(data)
        return len(data)


class _Lines:
    """The lines of a file decoded as :func:`_decode` decodes it, one pass at a time (:func:`_iter_lines`'s lines:
    ended by a newline, a carriage return and newline, or a lone carriage return)."""

    def __init__(self, file: str, fd: int, codec: codecs.CodecInfo, encoding: str) -> None:
        head = os.pread(fd, 4, 0)
        name = "utf-8-sig" if codec.name == "utf-8" else codec.name
        if codec.name == "utf-8" and head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
            name = "utf-32"
        elif codec.name == "utf-8" and head.startswith((b"\xff\xfe", b"\xfe\xff")):
            name = "utf-16"
        self.file, self.fd, self.name, self.encoding = file, fd, name, encoding
        self.nul_free = not name.startswith(("utf-16", "utf-32", "utf_16", "utf_32"))
        self.stamp = self._stamp()
        self.digest: bytes | None = None  # of the bytes the first whole pass read

    def _stamp(self) -> tuple[int, int]:
        st = os.fstat(self.fd)
        return st.st_size, st.st_mtime_ns

    def _changed(self) -> InvalidInput:
        return InvalidInput(f"{self.file}: the file changed while it was being read (once to check every record, "
                            f"again to store them): run the command again once nothing writes to it")

    def _refuse(self) -> InvalidInput:
        """The error :func:`_decode` gives for the whole file (a byte that does not decode, a NUL character)."""
        _decode(self.file, _fd_bytes(self.fd), self.encoding)
        return self._changed()  # it decodes whole: the file changed under this pass

    def __call__(self) -> Iterator[str]:
        if self._stamp() != self.stamp:
            raise self._changed()
        digest = hashlib.blake2b(digest_size=16)
        ended = True  # the text so far ends with a line's end (or is empty): a last, empty line follows
        raw = _Pass(self.fd, digest)
        with io.TextIOWrapper(io.BufferedReader(raw, _CHUNK), encoding=self.name, newline="") as f:
            try:
                for line in f:
                    if line.endswith("\n"):
                        line, ended = line[:-2] if line.endswith("\r\n") else line[:-1], True
                    elif line.endswith("\r"):
                        line, ended = line[:-1], True
                    else:
                        ended = False
                    if self.nul_free and "\x00" in line:
                        raise self._refuse()
                    yield line
            except UnicodeDecodeError:
                raise self._refuse() from None
        if self._stamp() != self.stamp or (self.digest is not None and digest.digest() != self.digest):
            raise self._changed()
        self.digest = digest.digest()
        if ended:
            yield ""


def _stream_source(file: str, fd: int, codec: codecs.CodecInfo, encoding: str) -> Source | None:
    """The Source of a file of one of :data:`STREAMED_FORMATS`, read as a stream; None for any other file (a JSON
    document, a zip archive, an empty file, an encoding that is no text encoding), which is read whole."""
    if os.pread(fd, 4, 0).startswith(b"PK\x03\x04") or not getattr(codec, "_is_text_encoding", True):
        return None
    lines = _Lines(file, fd, codec, encoding)
    found = (line for line in lines() if line.strip())
    try:
        first = next(found, None)
        second = None if first is None else next(found, None)
        more = second is not None
    finally:
        found.close()
    if first is None:
        return None
    src = Source(file, "", "")
    if _signal_md_head(first) is not None and _signal_md_pass(lines):
        src.format = "signal"
        src._stream = lambda: _signal_md_records(src, lines)
        return src
    if _whatsapp_head(first):
        src.format = "whatsapp"
        layout = _whatsapp_layout(lines)
        src._stream = lambda: _whatsapp_records(src, lines, layout)
        return src
    if _line_export(first, second):
        src.format = "line"
        src._stream = lambda: _line_records(src, lines)
        return src
    if _imessage_head(first) is not None:
        src.format = "imessage"
        src._stream = lambda: _imessage_records(src, lines)
        return src
    if _signal_txt_head(first) is not None:
        src.format = "signal"
        src._stream = lambda: _signal_txt_records(src, lines)
        return src
    if not first.lstrip().startswith("{"):
        return None
    try:
        head = json.loads(first)
    except (ValueError, RecursionError):
        return None
    if _signal_line(head):
        src.format = "signal"
        src._stream = lambda: _signal_records(src, lines)
        return src
    if claude_code_line(head):
        src.format = CLAUDE_CODE
        src._stream = lambda: claude_code_records(src, lines)
        return src
    if isinstance(head, dict) and not ("messages" in head or "conversation" in head or "chats" in head
                                       or _conversation_kind(head) is not None):
        src.format = "export" if head.get("format") == EXPORT_FORMAT else "jsonl"
        src._stream = lambda: _jsonl_records(src, lines)
        return src
    if isinstance(head, dict) and "messages" in head and more:
        src.format = "messages"
        src._stream = lambda: _conversation_records(src, lines)
        return src
    return None


# ------------------------------------------------------------------------------------------------- time zones

# The formats of chat apps, whose times are the phone's wall clock (WhatsApp, Telegram's "date") or an instant
# (Telegram's "date_unixtime", Messenger's "timestamp_ms", Discord's ISO times, Slack's "ts", ChatGPT's
# "create_time", Claude.ai's "created_at")
CHAT_FORMATS = ("whatsapp", "telegram", "telegram-export", "messenger", "discord", "slack", "slack-export",
                "google-chat", "line", "imessage", "signal", "chatgpt", "claude")
# an offset as people type it on a command line: "UTC+05:30", "+5", "-4:00" (read in the form time_zone reads)
_TYPED_OFFSET = re.compile(r"(?:UTC)?([+-])(\d{1,2})(?::?(\d{2}))?", re.IGNORECASE)


def parse_zone(value: str | tzinfo, name: str = "--timezone") -> tzinfo:
    """A time zone (:func:`hippo.base.timeutil.time_zone`): an IANA name ("Europe/Lisbon", "America/New_York",
    "UTC"), a fixed offset from UTC also as typed on a command line ("+05:30", "-04:00", "+0530", "+5",
    "UTC+05:30"), or a ``tzinfo`` as it is. ``InvalidInput`` naming ``name`` otherwise, with the IANA name meant
    when one differs only in case or by its region ("lisbon": "Europe/Lisbon")."""
    if not isinstance(value, str):
        return time_zone(value, name)
    text = value.strip()
    m = _TYPED_OFFSET.fullmatch(text)
    if m is not None:
        return time_zone(f"{m[1]}{int(m[2]):02d}:{m[3] or '00'}", name)
    try:
        return time_zone(text, name)
    except InvalidInput:
        pass
    try:
        known = zoneinfo.available_timezones()
    except OSError:
        known = set()
    if not known:
        raise InvalidInput(f"{name} {value!r}: no time zone database is installed (install the tzdata package), or "
                           f"give a fixed offset like '+05:30'")
    near = next((k for k in sorted(known) if k.lower() == text.lower()), None)
    near = near or next((k for k in sorted(known) if k.lower().endswith("/" + text.lower().replace(" ", "_"))), None)
    raise InvalidInput(f"{name} {value!r} is not a known time zone: give an IANA name like 'Europe/Lisbon' or "
                       f"'America/New_York', or an offset like '+05:30'" + (f" (did you mean {near!r}?)" if near
                                                                             else ""))


def _offset_text(off: timedelta) -> str:
    minutes = round(off.total_seconds() / 60)
    return f"UTC{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def in_zone(src: Source, zone: tzinfo, name: str) -> None:
    """The times of a chat app export read in ``zone`` (named ``name`` in errors), in place. A time written without
    an offset (WhatsApp's, Telegram's "date" without "date_unixtime") is the wall clock of ``zone``: stored as that
    instant, with the offset ``zone`` has on that day (summer and winter differ). An instant keeps its instant and
    takes ``zone``'s offset, the calendar its days are read on. A wall-clock time that does not exist in ``zone``
    (skipped when the clocks went forward) is refused; one that the clocks showed twice (when they went back) is the
    earlier of the two, unless the export's messages before it are already past that one: then it is the later."""
    for _ in zoned(src, src.records, zone, name):
        pass


def zoned(src: Source, records: Iterable[Record], zone: tzinfo, name: str) -> Iterator[Record]:
    """:func:`in_zone` one record at a time: each record of ``records`` read in ``zone`` (in place), then yielded."""
    if src.format not in CHAT_FORMATS:
        raise InvalidInput(f"--timezone applies to the exports of chat apps (WhatsApp, Telegram, Messenger, "
                           f"Instagram, Discord, Slack, Google Chat, LINE, iMessage, Signal) and of ChatGPT and "
                           f"Claude.ai; {src.file} holds "
                           f"{src.format} messages, whose timestamps are read with the offset they are written with "
                           f"(2024-03-12T23:30:00-04:00), as UTC without one")
    latest: datetime | None = None  # the last wall-clock time read, as an instant
    for rec in records:
        when = rec.item.get("timestamp")
        if not isinstance(when, datetime):
            yield rec
            continue
        try:
            if when.tzinfo is not None and when.utcoffset() is not None:
                rec.item["timestamp"] = when.astimezone(zone)
                yield rec
                continue
            early, late = when.replace(tzinfo=zone, fold=0), when.replace(tzinfo=zone, fold=1)
            first, second = early.astimezone(timezone.utc), late.astimezone(timezone.utc)
        except (OverflowError, ValueError, TypeError) as exc:
            raise src.error(rec, f"--timezone {name}: {when.isoformat(' ')} cannot be read in it ({exc})") from None
        if second < first:  # the clocks went forward past it: the two readings are the offsets before and after
            raise src.error(rec, f"--timezone {name}: {when.isoformat(' ')} does not exist there (the clocks went "
                                 f"forward from {_offset_text(early.utcoffset())} to "
                                 f"{_offset_text(late.utcoffset())} that night); is {name} the zone the export "
                                 f"was written in?")
        chosen = late if first < second and latest is not None and first < latest <= second else early
        rec.item["timestamp"] = chosen
        latest = chosen.astimezone(timezone.utc)
        yield rec


def _load_document(file: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{file}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise InvalidInput(f"{file}:{_deep_line(text)}: JSON nested too deeply to read") from None


def _deep_line(text: str, limit: int = 200) -> int:
    """The line where bracket nesting first exceeds ``limit`` (strings skipped)."""
    depth = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        tok = m.group()
        if tok in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, m.start()) + 1
        elif tok in "]}":
            depth -= 1
    return 1


def _read_jsonl(file: str, text: str) -> Source:
    src = Source(file, "jsonl", text)
    src.records.extend(_jsonl_records(src, lambda: _iter_lines(text)))
    return src


def _jsonl_records(src: Source, lines: Callable[[], Iterator[str]]) -> Iterator[Record]:
    """The records of a JSONL file, one line at a time (not all of them as a list besides the text); sets
    ``src.format`` to "export" when the first line is the header of a hippo export."""
    file = src.file
    export = False
    first = True
    n = 0
    places = _ResponsesPlaces()  # Responses API items, one a line: the places of those without a name
    for lineno, line in _nonblank(lines()):
        if first:
            first = False
            try:
                head = json.loads(line)
            except (ValueError, RecursionError):
                head = None  # reported with its line below
            if isinstance(head, dict) and head.get("format") == EXPORT_FORMAT:
                if head.get("version") != EXPORT_VERSION:
                    raise InvalidInput(f"{file}:{lineno}: hippo export version {head.get('version')!r} is not "
                                       f"supported (expected {EXPORT_VERSION})")
                export, src.format = True, "export"
                continue
        obj = _json_line(file, lineno, line)
        if not isinstance(obj, dict):
            raise InvalidInput(f"{file}:{lineno}: expected a JSON object per line, got {_kind(obj)}")
        traced: list[Record] | None = None
        openai = False
        try:
            if export:
                item = {k2: obj.get(k2) for k2 in EXPORT_FIELDS if k2 in obj}
                if obj.get("utc_offset") is not None and "timestamp" in item:  # the offset it was given with
                    try:
                        item["timestamp"] = with_utc_offset(item["timestamp"], obj["utc_offset"])
                    except InvalidInput as exc:
                        raise InvalidInput(f"{file}:{lineno}: {exc}") from None
            elif (traced := agent_trace_line(obj, lineno)) is not None:  # Responses, LangChain, LlamaIndex
                for rec in traced:
                    _check_depth(rec.item, ())
            elif "text" not in obj and "content" in obj:
                item = openai_item(obj, ())
                openai = True
            else:
                item = dict(obj)
            if traced is None:
                _check_depth(item, ())
        except SourceError as exc:
            raise InvalidInput(f"{file}:{lineno}: {exc.message}") from None
        if traced is not None:
            n += len(traced)
            if obj.get("object") == "response":  # a response saved whole: its items, all named by the API
                for it in obj["output"]:
                    if responses_item(it) and it.get("type") not in _RESPONSES_SILENT:
                        yield from places.name(_responses_name(it))
                yield from traced
            elif responses_item(obj):
                yield from places.feed(obj, traced)
            else:  # a LangChain or LlamaIndex message: no list of items opens before it
                yield from places.end()
                yield from traced
            continue
        n += 1
        if openai:  # an OpenAI-style message: a Responses API message may leave out its type
            yield from places.feed(obj, [Record(item, (), lineno)])
            continue
        yield from places.end()
        yield Record(item, (), lineno)
    yield from places.end()
    if not n:
        raise InvalidInput(f"{file}: no messages after the export header" if export else f"{file}: no messages")


# ------------------------------------------------------------------------------------------------- Signal

# signal-export (carderne/signal-export) writes a folder per chat with chat.md, index.html and data.json: JSONL, a
# message a line, {"date", "sender", "body", "quote", "sticker", "reactions", "attachments", "deleted", "call",
# "missed"}. "date" is the exporting machine's wall clock, ISO 8601 without an offset; "sender" the contact's name,
# "Me" for the owner, "No-Sender" when the tool found none; "body" the text (backquotes removed) and two spaces it
# adds for Markdown; "quote" the message answered as "\n\n> line\n> line\n\n"; "reactions" [[name, emoji]];
# "attachments" [{"name", "path"}]. A call is written as a message whose body describes it ("Missed voice call",
# "Incoming video call (accepted, 3m 2s)").
_SIGNAL_FIELDS = ("date", "sender", "body")
_SIGNAL_CALL = re.compile(r"^(?:Incoming|Outgoing|Missed) (?:(?:voice|video|audio) )?call(?: \([^()\n]*\))?$")


def _signal_line(head: Any) -> bool:
    """Whether the first line of a JSONL file is a message of signal-export's data.json."""
    return (isinstance(head, dict) and all(k in head for k in _SIGNAL_FIELDS)
            and not any(k in head for k in ("text", "content", "role", "messages")))


def _signal_records(src: Source, lines: Callable[[], Iterator[str]]) -> Iterator[Record]:
    """The messages of signal-export's data.json, one line at a time: ``sender`` as speaker (none for
    "No-Sender"), ``date`` as time (a wall-clock time, as WhatsApp's), ``body`` as text. Deleted messages, calls,
    and stickers or attachments without words left out. Metadata: ``quote`` (the words of the message answered),
    ``attachments`` (file names), ``reactions`` as ``[{"reaction", "actor"}]``."""
    file = src.file
    n = 0
    for lineno, line in _nonblank(lines()):
        obj = _json_line(file, lineno, line)

        def bad(key: str, what: str) -> InvalidInput:
            return InvalidInput(f"{file}:{lineno}: field {key!r} must be {what}, got {obj.get(key)!r}"[:300])

        if not isinstance(obj, dict) or not all(key in obj for key in _SIGNAL_FIELDS):
            missing = [] if not isinstance(obj, dict) else sorted(set(_SIGNAL_FIELDS) - set(obj))
            got = _kind(obj) if not isinstance(obj, dict) else f"an object without {missing}"
            raise InvalidInput(f"{file}:{lineno}: expected a message of signal-export's data.json per line "
                               f'({{"date", "sender", "body", ...}}), like the first, got {got}')
        date = obj["date"]
        try:
            when = parse_iso(date.strip()) if isinstance(date, str) else None
        except ValueError:
            when = None
        if when is None:
            raise bad("date", "an ISO-8601 date and time like '2024-03-12T09:05:33'")
        for key in ("sender", "body", "quote"):
            if obj.get(key) is not None and not isinstance(obj[key], str):
                raise bad(key, "a string")
        sender = (obj["sender"] or "").strip()
        body = (obj["body"] or "").strip()
        meta: dict[str, Any] = {}
        quote = (obj.get("quote") or "").strip("\n")
        if quote.strip():
            meta["quote"] = "\n".join(q[2:] if q.startswith("> ") else q.removeprefix(">")
                                      for q in quote.strip().split("\n"))
        attachments = obj.get("attachments")
        if attachments is not None:
            if not isinstance(attachments, list) or not all(isinstance(a, dict) and isinstance(a.get("name"), str)
                                                            for a in attachments):
                raise bad("attachments", "a list of files {\"name\", \"path\"}")
            if attachments:
                meta["attachments"] = [a["name"] for a in attachments]
        reactions = obj.get("reactions")
        if reactions is not None:
            got = []
            for r in reactions if isinstance(reactions, list) else [None]:
                if isinstance(r, list) and len(r) == 2 and all(isinstance(x, str) for x in r):
                    got.append({"reaction": r[1], "actor": r[0]})
                elif isinstance(r, dict) and isinstance(r.get("emoji"), str) and isinstance(r.get("name"), str):
                    got.append({"reaction": r["emoji"], "actor": r["name"]})
                else:
                    raise bad("reactions", "a list of [name, emoji]")
            if got:
                meta["reactions"] = got
        n += 1  # a record of the file, read whether or not it is stored
        if (obj.get("deleted") is True or obj.get("call") is True or obj.get("missed") is True or not body
                or _SIGNAL_CALL.match(body)):
            continue
        item: dict[str, Any] = {"text": body, "speaker": None if sender in ("", "No-Sender") else sender,
                                "role": "user", "timestamp": when}
        if meta:
            item["metadata"] = meta
        try:
            _check_depth(item, ())
        except SourceError as exc:
            raise InvalidInput(f"{file}:{lineno}: {exc.message}") from None
        # the message as written, less what changes after it was sent (reactions, where its files were copied)
        raw = _picked(obj, ("date", "sender", "body", "quote"))
        yield Record(item, (), lineno, digest=source_digest("signal", raw))
    if not n:
        raise InvalidInput(f"{file}: no messages in this signal-export data.json")


# signalbackup-tools (bepaald/signalbackup-tools) --exporttxt writes a file per chat: a line per message, "[Mar 12, 2024
# 09:05:33] <Ann> text" (the phone's wall clock, English month), the lines of a message of several after it, the
# reactions after its last line, " (Bo: 👍; Cy: ❤)"; a file sent "[...] *** <Ann> sent file "IMG_1.jpg"" before the
# message it came with (same time and sender); the app's notices and calls "[...] *** text"; a poll "[...] <Ann>
# Poll: question" with a line per option, "[votes] option", indented. Deleted and view-once messages it leaves out.
_SIGNAL_TXT = re.compile(r"^\ufeff?\[(?P<mon>[A-Z][a-z]{2}) (?P<d>\d{1,2}), (?P<y>\d{4}) (?P<h>\d{2}):(?P<mi>\d{2}):"
                         r"(?P<s>\d{2})\] (?P<rest>\*\*\* .*|<[^<>\n]*> .*)$", re.DOTALL)
_SIGNAL_TXT_SAID = re.compile(r"^<(?P<who>[^<>\n]*)> (?P<text>.*)$", re.DOTALL)
_SIGNAL_TXT_FILE = re.compile(r'^\*\*\* <(?P<who>[^<>\n]*)> sent file(?: "(?P<name>[^"\n]*)"| of type \S+)?')
_SIGNAL_TXT_REACTIONS = re.compile(r" \((?P<all>[^()\n:]+: [^\w\s;()]{1,16}(?:; [^()\n:]+: [^\w\s;()]{1,16})*)\)$")
_SIGNAL_TXT_OPTION = re.compile(r"^\s+\[(?P<votes>\d+)\] (?P<option>.*)$")


def _signal_txt_head(line: str) -> tuple[datetime, str] | None:
    """(time, the rest of the line) of a line signalbackup-tools' text export starts a message with, else None."""
    m = _SIGNAL_TXT.match(line)
    if m is None or m["mon"].lower() not in _MONTHS:
        return None
    try:
        when = datetime(int(m["y"]), _MONTHS[m["mon"].lower()], int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"]))
    except ValueError:
        return None
    return when, m["rest"]


def _signal_txt_records(src: Source, lines: Callable[[], Iterator[str]]) -> Iterator[Record]:
    """The messages of a Signal chat signalbackup-tools exported as text: the sender in angle brackets as speaker,
    the time as the phone's wall clock, the lines of the message as text less its reactions, which go to
    ``metadata["reactions"]`` as ``[{"reaction", "actor"}]``; the files a message came with (the "sent file" lines
    just before it, of its sender and time) in ``metadata["attachments"]``; a poll as its question and its options,
    ``- `` before each. Notices, calls and files without words are left out."""
    file = src.file
    files: tuple[datetime, str, list[str]] | None = None  # the files sent just before, by whom and when
    current: tuple[int, datetime, list[str]] | None = None  # a message being read: line, time, lines
    found = 0

    def flush() -> Record | None:
        nonlocal files
        if current is None:
            return None
        lineno, when, raw = current
        said = _SIGNAL_TXT_SAID.match("\n".join(raw))
        if said is None:  # a notice, a call, or a file (kept for the message it came with)
            sent = _SIGNAL_TXT_FILE.match(raw[0])
            if sent is not None:
                same = files is not None and files[0] == when and files[1] == sent["who"]
                files = (when, sent["who"], (files[2] if same else []) + ([sent["name"]] if sent["name"] else []))
            return None
        who, text = said["who"].strip(), said["text"]
        meta: dict[str, Any] = {}
        reactions = _SIGNAL_TXT_REACTIONS.search(text)
        if reactions is not None:
            meta["reactions"] = [{"reaction": r.rsplit(": ", 1)[1], "actor": r.rsplit(": ", 1)[0]}
                                 for r in reactions["all"].split("; ")]
            text = text[:reactions.start()]
        if text.startswith("Poll: ") and len(raw) > 1:
            options = [_SIGNAL_TXT_OPTION.match(line) for line in raw[1:]]
            if all(options):
                text = "\n".join([text.split("\n", 1)[0].removeprefix("Poll: ").strip()]
                                 + [f"- {o['option'].strip()}" for o in options])
        if files is not None and files[0] == when and files[1] == said["who"] and files[2]:
            meta["attachments"] = files[2]
        files = None
        if not text.strip():
            return None
        item: dict[str, Any] = {"text": text.strip(), "speaker": who or None, "role": "user", "timestamp": when}
        if meta:
            item["metadata"] = meta
        # the message's lines as written, less its reactions (which change after it was sent)
        written = "\n".join(raw)
        if reactions is not None:
            written = written[:len(written) - len(reactions[0])]
        return Record(item, (), lineno, digest=source_digest("signal-txt", written))

    for k, line in enumerate(lines()):
        head = _signal_txt_head(line)
        if head is None and _SIGNAL_TXT.match(line):
            raise InvalidInput(f"{file}:{k + 1}: {line[1:line.index(']')]!r} is no date and time")
        if head is not None:
            done = flush()
            if done is not None:
                found += 1
                yield done
            current = (k + 1, head[0], [line[line.index("] ") + 2:]])
        elif current is not None:
            current[2].append(line)
        elif line.strip():
            raise InvalidInput(f"{file}:{k + 1}: expected a message of signalbackup-tools' text export, "
                               f"'[Mar 12, 2024 09:05:33] <Ann> ...', got {line.strip()[:40]!r}")
    if current is not None:
        while current[2] and not current[2][-1].strip():  # the file's last line break, not the message's
            current[2].pop()
    done = flush()
    if done is not None:
        found += 1
        yield done


# signal-export's chat.md: a message is "[2024-03-12 09:05:33] Ann: " and its body with two spaces after it (a line
# break in Markdown), then an empty line; the message answered before the body, "\n\n> line\n> line\n\n"; the
# reactions on a line of their own, "(- Bo: 👍, Cy: ❤ -)"; a sticker "(( 😀 ))"; each file as a Markdown link,
# "![name](./media/name)  " ("!" for a picture); a deleted message "(This message was deleted)". The same
# "[date time] name: text" is what WhatsApp writes on an iPhone set to ISO dates, without the empty lines and the
# two spaces.
_SIGNAL_MD = re.compile(r"^\ufeff?\[(?P<date>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\] (?P<who>[^:\n]+?): ?(?P<rest>.*)$")
_SIGNAL_MD_REACTIONS = re.compile(r"^\(- (?P<all>.*) -\)$")
_SIGNAL_MD_STICKER = re.compile(r"^\(\( .* \)\)$")
_SIGNAL_MD_FILE = re.compile(r"!?\[(?P<name>[^\[\]\n]*)\]\((?:\./media/|\.\./exported_stickers/)[^)\s]*\) *")
_SIGNAL_MD_DELETED = "(This message was deleted)"


def _signal_md_head(line: str) -> re.Match | None:
    return _SIGNAL_MD.match(line)


def _signal_md(lines: Iterable[str]) -> bool:
    """Whether a text file is signal-export's chat.md: its first message opens with its head and ends as the tool
    ends one (two spaces, a reactions, sticker or file line, or a deleted message) before an empty line."""
    block: list[str] = []
    for k, line in enumerate(lines):
        if k > 500:
            return False
        if not block:
            if not line.strip():
                continue
            if _signal_md_head(line) is None:
                return False
            block.append(line)
            continue
        if _signal_md_head(line) is not None and block[-1] == "":
            break
        block.append(line)
    while block and block[-1] == "":
        block.pop()
    if not block:
        return False
    last = block[-1]
    return (last.endswith("  ") or bool(_SIGNAL_MD_REACTIONS.match(last)) or bool(_SIGNAL_MD_STICKER.match(last))
            or last.endswith(_SIGNAL_MD_DELETED))


def _signal_md_pass(lines: Callable[[], Iterator[str]]) -> bool:
    """:func:`_signal_md` of a file read as a stream, the pass closed where it stops."""
    found = lines()
    try:
        return _signal_md(found)
    finally:
        found.close()


def _signal_md_records(src: Source, lines: Callable[[], Iterator[str]]) -> Iterator[Record]:
    """The messages of signal-export's chat.md: the name before the colon as speaker (none for "No-Sender"), the
    time as the wall clock (as WhatsApp's), the body as text; the quoted message's words in ``metadata["quote"]``,
    the files in ``metadata["attachments"]``, the reactions as ``[{"reaction", "actor"}]``. Deleted messages,
    calls, stickers and files without words left out."""
    block: list[str] = []
    start = 0

    def flush() -> Record | None:
        while block and block[-1] == "":
            block.pop()
        if not block:
            return None
        m = _signal_md_head(block[0])
        body = [m["rest"], *block[1:]]
        meta: dict[str, Any] = {}
        written = list(block)
        if body and _SIGNAL_MD_REACTIONS.match(body[-1]):
            got = []
            for entry in _SIGNAL_MD_REACTIONS.match(body[-1])["all"].split(", "):
                name, _, emoji = entry.rpartition(":")
                if name:
                    got.append({"reaction": emoji.strip(), "actor": name.strip()})
            if got:
                meta["reactions"] = got
            body.pop()
            written.pop()  # reactions change after the message was sent
        if body and _SIGNAL_MD_STICKER.match(body[-1]):
            body.pop()
        if len(body) > 2 and not body[0].strip() and not body[1].strip() and body[2].startswith("> "):
            k = 2
            quote = []
            while k < len(body) and body[k].startswith("> "):
                quote.append(body[k][2:])
                k += 1
            meta["quote"] = "\n".join(quote).strip()
            body = body[k + 1:] if k < len(body) and not body[k].strip() else body[k:]
        text = "\n".join(body)
        names = [f["name"] for f in _SIGNAL_MD_FILE.finditer(text)]
        if names:
            meta["attachments"] = names
            text = _SIGNAL_MD_FILE.sub("", text)
        text = text.strip()
        if not text or text == _SIGNAL_MD_DELETED or _SIGNAL_CALL.match(text):
            return None
        who = m["who"].strip()
        try:
            when = datetime.strptime(m["date"], "%Y-%m-%d %H:%M:%S")
        except ValueError:
            raise InvalidInput(f"{src.file}:{start}: {m['date']!r} is no date and time") from None
        item: dict[str, Any] = {"text": text, "speaker": None if who == "No-Sender" else who, "role": "user",
                                "timestamp": when}
        if meta:
            item["metadata"] = meta
        return Record(item, (), start, digest=source_digest("signal-md", "\n".join(written)))

    for k, line in enumerate(lines()):
        if _signal_md_head(line) is not None and (not block or block[-1] == ""):
            done = flush()
            if done is not None:
                yield done
            block, start = [line], k + 1
        elif block:
            block.append(line)
        elif line.strip():
            raise InvalidInput(f"{src.file}:{k + 1}: expected a message of signal-export's chat.md, "
                               f"'[2024-03-12 09:05:33] Ann: ...', got {line.strip()[:40]!r}")
    done = flush()
    if done is not None:
        yield done


def _nonblank(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """The lines that hold more than spaces, each with its number counted from 1 over all lines."""
    for k, line in enumerate(lines):
        if line.strip():
            yield k + 1, line


def _json_line(file: str, lineno: int, line: str) -> Any:
    """One line of a JSONL file, parsed; an ``InvalidInput`` naming the file and the line when it is not JSON."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{file}:{lineno}: not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise InvalidInput(f"{file}:{lineno}: JSON nested too deeply to read") from None


def _read_jsonl_conversations(file: str, text: str) -> Source:
    """JSONL whose every line is a conversation ``{"messages": [...]}``: its messages in order, line after line."""
    src = Source(file, "messages", text)
    src.records.extend(_conversation_records(src, lambda: _iter_lines(text)))
    return src


def _conversation_records(src: Source, lines: Callable[[], Iterator[str]]) -> Iterator[Record]:
    file = src.file
    n = 0
    for lineno, line in _nonblank(lines()):
        obj = _json_line(file, lineno, line)
        if not isinstance(obj, dict) or "messages" not in obj:
            got = _kind(obj) if not isinstance(obj, dict) else "an object without messages"
            raise InvalidInput(f"{file}:{lineno}: expected a conversation {{\"messages\": [...]}} per line, like the "
                               f"first, got {got}")
        try:
            _, records = _convert_document(obj)
            for rec in records:
                _check_depth(rec.item, rec.path)
        except SourceError as exc:
            raise InvalidInput(f"{file}:{lineno}: {render_path(exc.path) + ': ' if exc.path else ''}"
                               f"{exc.message}") from None
        n += len(records)
        yield from (Record(rec.item, rec.path, lineno) for rec in records)
    if not n:
        raise InvalidInput(f"{file}: the conversations hold no messages")


def depth(value: Any) -> int:
    """Nesting depth of lists and dicts in ``value`` (0 for a scalar), computed without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in v if isinstance(x, (list, dict)))
    return deepest


def _check_depth(item: dict[str, Any], path: Path) -> None:
    for key, value in item.items():
        if depth(value) > MAX_DEPTH:
            raise SourceError(path, f"field {key!r} is nested more than {MAX_DEPTH} levels deep", key)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


# ------------------------------------------------------------------------------------------------- documents


def _convert_document(doc: Any) -> tuple[str, list[Record]]:
    traced = agent_trace_records(doc)  # Responses API items, LangChain or LlamaIndex messages
    if traced is not None:
        return traced
    if isinstance(doc, dict):
        if "messages" in doc:
            msgs = doc["messages"]
            if not isinstance(msgs, list):
                raise SourceError(("messages",), f"expected a list of messages, got {_kind(msgs)}")
            # Telegram's result.json: messages without a role, dated (the first one may be a service message
            # without a date) or beside the chat's own "type" and "id" ("personal_chat", "private_group", ...)
            head = [m for m in msgs[:20] if isinstance(m, dict)]
            if head and not any("role" in m for m in head) and any("sender_name" in m and "timestamp_ms" in m
                                                                   for m in head):
                # Facebook Messenger's and Instagram's "Download your information" JSON (message_1.json, ...)
                return "messenger", messenger_records(doc)
            if head and not any("role" in m for m in head) and any("senderName" in m and "timestamp" in m
                                                                   and not isinstance(m.get("author"), dict)
                                                                   for m in head):
                # Messenger's download of its end-to-end encrypted chats (<Name>_<n>.json): the same thread in
                # other words, senderName, timestamp, text, isUnsent, media
                return "messenger", messenger_records(doc, encrypted=True)
            if head and not any("role" in m for m in head) and any(isinstance(m.get("creator"), dict)
                                                                   and "created_date" in m for m in head):
                # Google Chat in Google Takeout: Google Chat/Groups/<DM or Space ...>/messages.json
                return "google-chat", google_chat_records(msgs)
            if head and not any("role" in m for m in head) and any(isinstance(m.get("author"), dict)
                                                                   and "timestamp" in m for m in head):
                # DiscordChatExporter's JSON of a channel: {"guild", "channel", "messages": [{"author": {...}}]}
                return "discord", discord_records(msgs)
            if head and not any("role" in m for m in head) and (
                    any("date" in m for m in head) or (isinstance(doc.get("type"), str) and "id" in doc)):
                return "telegram", list(telegram_records(msgs, bot=_telegram_bot(doc)))
            if head and not any("role" in m for m in head):
                # other apps' exports are {"messages": [...]} too, of other fields: no OpenAI-style file with one
                # bad message, but a format hippo does not read
                raise SourceError((), f"not a format hippo ingest reads: its messages have no 'role' (OpenAI-style "
                                      f"messages) and no 'date' (a Telegram export); the first has the fields "
                                      f"{sorted(head[0])[:8]}")
            return "messages", [Record(openai_item(m, ("messages", k)), ("messages", k)) for k, m in enumerate(msgs)]
        if "conversation" in doc:
            return "locomo", list(locomo_records(doc, ()))
        kind = _conversation_kind(doc)
        if kind is not None:  # one conversation of a ChatGPT or Claude.ai export, as a file of its own
            return kind, _one_time_line([(chatgpt_records if kind == "chatgpt" else claude_records)(doc, ())])
        if isinstance(doc.get("chats"), dict) and "list" in doc["chats"]:
            # Telegram's export of a whole account (Settings, "Export Telegram data"): result.json too, its chats
            # under "chats" (and "left_chats"), each as the export of one chat writes it
            return "telegram-export", telegram_export_records(doc)
        raise SourceError((), "a JSON object must hold 'messages' (OpenAI style or a Telegram chat), 'chats' (a "
                              "Telegram account) or 'conversation' (LoCoMo)")
    if not isinstance(doc, list):
        raise SourceError((), f"expected a JSON list or object, got {_kind(doc)}")
    if not doc:
        return "messages", []
    first = doc[0]
    if not isinstance(first, dict):
        raise SourceError((0,), f"expected an object, got {_kind(first)}")
    if "conversation" in first:
        out: list[Record] = []
        for k, sample in enumerate(doc):
            out.extend(locomo_records(sample, (k,)))
        return "locomo", out
    if "turns" in first and "batch_number" in first:
        return "beam", list(beam_records(doc))
    if "ts" in first and first.get("type", "message") == "message" and "role" not in first:
        # a day of a Slack channel, <channel>/<YYYY-MM-DD>.json of a workspace export (hippo messages have no "ts")
        return "slack", slack_records(doc)
    if "text" in first:
        out = []
        for k, obj in enumerate(doc):
            if not isinstance(obj, dict):
                raise SourceError((k,), f"expected an object, got {_kind(obj)}")
            out.append(Record(dict(obj), (k,)))
        return "hippo", out
    if "role" in first:
        return "messages", [Record(openai_item(m, (k,)), (k,)) for k, m in enumerate(doc)]
    raise SourceError((0,), "not a message: expected OpenAI-style 'role' and 'content', hippo's 'text', "
                            "BEAM's 'turns' or LoCoMo's 'conversation'")


def _text_field(obj: dict, key: str, path: Path) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SourceError(path, f"field {key!r} must be a non-empty string, got "
                                f"{'an empty string' if isinstance(value, str) else _kind(value)}", key)
    return value


def _optional_text(obj: dict, key: str, path: Path) -> str:
    """A record's text field that may be missing or null (a message of an attachment only): "" then."""
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise SourceError(path, f"field {key!r} must be a string, got {_kind(value)}", key)
    return value


def _person(obj: dict, key: str, names: tuple[str, ...], path: Path) -> str | None:
    """The first non-empty of ``names`` in a record's person object ``key`` (missing or null: no name)."""
    person = obj.get(key)
    if person is None:
        return None
    if not isinstance(person, dict):
        raise SourceError(path, f"field {key!r} must be an object, got {_kind(person)}", key)
    return next((person[f].strip() for f in names if isinstance(person.get(f), str) and person[f].strip()), None)


def _content_text(content: Any, path: Path, where: str = "content") -> str:
    """A message's ``content``: a string, or content parts whose text is joined and whose media leave a marker.

    OpenAI's parts (``text``, ``input_text``, ``output_text``, ``image_url``, ``input_image``, ``file``, ``refusal``)
    and Anthropic's content blocks: a ``tool_use`` block is the line ``[tool call name(input)]``, as an OpenAI tool
    call is; a ``tool_result`` block is its ``content`` (a string or blocks of its own), the tool's output; an
    ``image`` or ``document`` block leaves a marker with its URL or title. Other blocks (``thinking``, a server tool's
    use) leave ``[type]``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise SourceError(path, f"field {where!r} must be a string or a list of content parts, got {_kind(content)}")
    pieces = []
    for k, part in enumerate(content):
        if isinstance(part, str):
            pieces.append(part)
            continue
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise SourceError(path, f"field '{where}[{k}]' must be a content part with a 'type'")
        kind = part["type"]
        if kind in ("text", "input_text", "output_text"):
            if not isinstance(part.get("text"), str):
                raise SourceError(path, f"field '{where}[{k}].text' must be a string")
            pieces.append(part["text"])
        elif kind in ("image_url", "input_image"):
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            pieces.append(f"[image: {url}]" if isinstance(url, str) and not url.startswith("data:") else "[image]")
        elif kind == "image":  # Anthropic: {"source": {"type": "url", "url": ...}} or base64 data
            source = part.get("source")
            url = source.get("url") if isinstance(source, dict) and source.get("type") == "url" else None
            pieces.append(f"[image: {url}]" if isinstance(url, str) else "[image]")
        elif kind == "file":
            name = (part.get("file") or {}).get("filename") if isinstance(part.get("file"), dict) else None
            pieces.append(f"[file: {name}]" if isinstance(name, str) else "[file]")
        elif kind == "document":  # Anthropic
            title = part.get("title")
            pieces.append(f"[document: {title}]" if isinstance(title, str) and title.strip() else "[document]")
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            pieces.append(part["refusal"])
        elif kind == "tool_use":  # Anthropic: an assistant's tool call
            if not isinstance(part.get("name"), str):
                raise SourceError(path, f"field '{where}[{k}].name' must be a string")
            args = part.get("input", {})
            pieces.append(f"[tool call {part['name']}({args if isinstance(args, str) else json.dumps(args)})]")
        elif kind == "tool_result":  # Anthropic: a tool's output, sent in a user message
            said = _content_text(part.get("content"), path, f"{where}[{k}].content")
            pieces.append(said if said.strip() else "[tool_result]")
        else:
            pieces.append(f"[{kind}]")
    return "\n".join(p for p in pieces if p)


def _tool_results(content: Any) -> list[dict] | None:
    """An Anthropic message's blocks when every one is a ``tool_result`` (a tool's output sent as a user message), else
    None."""
    if not isinstance(content, list) or not content:
        return None
    if all(isinstance(part, dict) and part.get("type") == "tool_result" for part in content):
        return content
    return None


def openai_item(msg: Any, path: Path) -> dict[str, Any]:
    """One OpenAI-style chat message as a hippo item; hippo's own optional keys pass through."""
    if not isinstance(msg, dict):
        raise SourceError(path, f"expected a message object, got {_kind(msg)}")
    role = msg.get("role")
    if not isinstance(role, str) or role not in _OPENAI_ROLES:  # a list or an object is no role (nor hashable)
        raise SourceError(path, f"field 'role' must be one of {sorted(_OPENAI_ROLES)}, got {role!r}", "role")
    text = _content_text(msg.get("content"), path)
    results = _tool_results(msg.get("content")) if role == "user" else None
    if not text.strip():
        # A chat completion's assistant message without content says what it said elsewhere: a refusal, or the
        # transcript of a spoken (audio) answer.
        audio = msg.get("audio")
        for said in (msg.get("refusal"), audio.get("transcript") if isinstance(audio, dict) else None):
            if isinstance(said, str) and said.strip():
                text = said
                break
    metadata = msg.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise SourceError(path, f"field 'metadata' must be an object, got {_kind(metadata)}")
    metadata = dict(metadata or {})
    calls = msg.get("tool_calls") or ([msg["function_call"]] if isinstance(msg.get("function_call"), dict) else [])
    if calls:
        if not isinstance(calls, list):
            raise SourceError(path, f"field 'tool_calls' must be a list, got {_kind(calls)}")
        lines = []
        for call in calls:
            fn = call.get("function", call) if isinstance(call, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise SourceError(path, "field 'tool_calls' holds a call without a function name")
            args = fn.get("arguments", "")
            lines.append(f"[tool call {fn['name']}({args if isinstance(args, str) else json.dumps(args)})]")
        text = "\n".join([text, *lines]) if text.strip() else "\n".join(lines)
        if "tool_calls" in metadata and metadata["tool_calls"] != calls:
            raise SourceError(path, "field 'metadata' holds 'tool_calls' of its own besides the message's tool calls",
                              "metadata")
        metadata["tool_calls"] = calls
    if not text.strip():
        raise SourceError(path, "field 'content' is empty (and there are no tool calls)", "content")
    call_id = msg.get("tool_call_id")
    if isinstance(call_id, (str, int)) and not isinstance(call_id, bool):  # some servers number their calls
        metadata["tool_call_id"] = str(call_id)
    if results is not None:  # a tool's output, as an OpenAI "tool" message holds it
        ids = [r.get("tool_use_id") for r in results]
        if "tool_call_id" not in metadata and len(ids) == 1 and isinstance(ids[0], str):
            metadata["tool_call_id"] = ids[0]
        role = "tool"
    item: dict[str, Any] = {"text": text, "role": _OPENAI_ROLES[role]}
    name = msg.get("name", msg.get("speaker"))
    if name is not None:
        item["speaker"] = name
    for key in ("timestamp", "session_id", "priority", "event_time"):
        if key in msg:
            item[key] = msg[key]
    if metadata:
        item["metadata"] = metadata
    return item


# ------------------------------------------------------------------------------------------------- agent traces

def _id_field(obj: dict[str, Any], path: Path, key: str) -> str | None:
    """An agent trace's id field ``key`` of ``obj``: a non-empty string, or None when missing or null."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise SourceError(path, f"field {key!r} must be a non-empty string, got {_kind(value)}", key)
    return value


# OpenAI's Responses API: the items of a response's "output" and of a request's "input". A message is a message; a
# call of a function or of a custom tool is the line an OpenAI chat completion's tool call gives; its output a message
# of role tool. The items that say nothing to anyone (the model's reasoning, a reference to an item stored elsewhere,
# the list of an MCP server's tools, an approval asked or given, a compacted history) are left out.
_RESPONSES_SILENT = frozenset({"reasoning", "item_reference", "mcp_list_tools", "mcp_approval_request",
                               "mcp_approval_response", "compaction", "additional_tools"})
# What a built-in tool's call was asked to do, by the first of these fields it has
_RESPONSES_ARGUMENTS = ("arguments", "input", "action", "operation", "queries", "code", "prompt")
RESPONSES = "openai-responses"


def responses_item(obj: Any) -> bool:
    """Whether ``obj`` is an item of OpenAI's Responses API: a message ``{"type": "message", "role", "content"}``, a
    tool's call (``function_call``, ``web_search_call``, ...) or output, or an item left out (``reasoning``)."""
    if not isinstance(obj, dict) or "text" in obj:
        return False
    kind = obj.get("type")
    return isinstance(kind, str) and (kind == "message" and "role" in obj or kind in _RESPONSES_SILENT
                                      or kind.endswith(("_call", "_call_output")))


def _responses_output(value: Any, path: Path) -> str:
    """A tool's output as an item of the Responses API holds it: a string, content parts (``input_text``,
    ``input_image``, ``input_file``), a screenshot, or a shell's ``[{"stdout", "stderr"}]``."""
    if isinstance(value, dict) and value.get("type") == "computer_screenshot":
        url = value.get("image_url")
        return f"[image: {url}]" if isinstance(url, str) and not url.startswith("data:") else "[image]"
    if isinstance(value, list) and all(isinstance(v, dict) and "type" not in v and ("stdout" in v or "stderr" in v)
                                       for v in value) and value:
        pieces = []
        for k, v in enumerate(value):
            for key in ("stdout", "stderr"):
                if v.get(key) is not None and not isinstance(v[key], str):
                    raise SourceError(path, f"field 'output[{k}].{key}' must be a string, got {_kind(v[key])}",
                                      "output")
                pieces.append(v.get(key) or "")
        return "\n".join(p for p in pieces if p)
    if value is not None and not isinstance(value, (str, list)):
        raise SourceError(path, f"field 'output' must be a string or a list of content parts, got {_kind(value)}",
                          "output")
    return _content_text(value, path, "output")


def responses_records(obj: Any, path: Path, line: int | None = None,
                      when: datetime | None = None) -> list[Record]:
    """The records of one Responses API item (none for the items left out): a message as an OpenAI message; a call
    of a function (``function_call``: ``call_id``, ``name``, ``arguments``) or of a custom tool (``custom_tool_call``:
    ``input``) the assistant's line ``[tool call name(arguments)]`` with the call in ``metadata["tool_calls"]`` as a
    chat completion writes it; a built-in tool's call (``web_search_call``, ``file_search_call``, ``mcp_call``, ...)
    the line ``[tool call web_search(action)]``, and the output an ``mcp_call`` carries (or the logs of a
    ``code_interpreter_call``) a message of role tool; other results a built-in call carries are not kept; an
    output (``function_call_output``, ``custom_tool_call_output``, ``computer_call_output``, ...) a message of role
    tool with its ``call_id`` as ``metadata["tool_call_id"]``. An item with an ``id`` (or a ``call_id``) has its
    identity (:func:`source_id`), so a list read again (a later request's input repeats the earlier items) stores each
    item once. ``when``: the time of the response the item is an output of."""
    if not isinstance(obj, dict):
        raise SourceError(path, f"expected an item of the Responses API, got {_kind(obj)}")
    kind = obj.get("type", "message" if "role" in obj else None)  # a message may leave out its type
    if not isinstance(kind, str):
        raise SourceError(path, f"field 'type' must name the item's kind ('message', 'function_call', ...), got "
                                f"{_kind(kind)}", "type")
    if kind in _RESPONSES_SILENT:
        return []
    item_id = _id_field(obj, path, "id")
    call_id = _id_field(obj, path, "call_id")
    metadata: dict[str, Any] = {}
    out: list[dict[str, Any]] = []
    if kind == "message":
        role = obj.get("role")
        if role not in ("user", "assistant", "system", "developer"):
            raise SourceError(path, f"field 'role' must be one of ['assistant', 'developer', 'system', 'user'], got "
                                    f"{role!r}", "role")
        content = obj.get("content")
        if not isinstance(content, (str, list)):
            raise SourceError(path, f"field 'content' must be a string or a list of content parts, got "
                                    f"{_kind(content)}", "content")
        # hippo's own keys pass, as they pass an OpenAI-style message (a list of Anthropic's messages, whose type is
        # "message" too, may carry them)
        item = openai_item({k: v for k, v in obj.items() if k not in ("type", "id", "status")}, path)
    elif kind in ("function_call", "custom_tool_call"):
        arg_key = "arguments" if kind == "function_call" else "input"
        for key in ("name", arg_key):
            if not isinstance(obj.get(key), str):
                raise SourceError(path, f"field {key!r} must be a string, got {_kind(obj.get(key))}", key)
        if call_id is None:
            raise SourceError(path, "field 'call_id' must be a non-empty string, got null", "call_id")
        call = ({"id": call_id, "type": "function", "function": {"name": obj["name"], "arguments": obj[arg_key]}}
                if kind == "function_call" else
                {"id": call_id, "type": "custom", "custom": {"name": obj["name"], "input": obj[arg_key]}})
        item = {"text": f"[tool call {obj['name']}({obj[arg_key]})]", "role": "assistant",
                "metadata": {"tool_calls": [call]}}
    elif kind.endswith("_call_output"):
        if "output" not in obj:
            raise SourceError(path, "field 'output' is missing: the tool's output", "output")
        text = _responses_output(obj["output"], path)
        item = {"text": text if text.strip() else f"[{kind}]", "role": "tool"}
        if call_id is not None:
            metadata["tool_call_id"] = call_id
    elif not kind.endswith("_call"):
        raise SourceError(path, f"field 'type' is {kind!r}, which is no item of the Responses API that hippo ingest "
                                f"reads (a 'message', a tool's call or its output)", "type")
    else:  # a built-in tool's call, which the API ran itself: what it was asked
        name = obj.get("name") if isinstance(obj.get("name"), str) and obj["name"] else kind[:-len("_call")]
        args = next((obj[key] for key in _RESPONSES_ARGUMENTS if obj.get(key) is not None), None)
        said = "" if args is None else args if isinstance(args, str) else json.dumps(args)
        item = {"text": f"[tool call {name}({said})]", "role": "assistant"}
        output = obj.get("output")
        if output is not None and not isinstance(output, str):
            raise SourceError(path, f"field 'output' must be a string, got {_kind(output)}", "output")
        outputs = obj.get("outputs")  # what the code interpreter's code printed (its logs) and drew (images)
        if outputs is not None:
            if not isinstance(outputs, list) or not all(isinstance(o, dict) for o in outputs):
                raise SourceError(path, f"field 'outputs' must be a list of outputs, got {_kind(outputs)}", "outputs")
            said = []
            for k, o in enumerate(outputs):
                if o.get("type") == "logs":
                    if not isinstance(o.get("logs"), str):
                        raise SourceError(path, f"field 'outputs[{k}].logs' must be a string", "outputs")
                    said.append(o["logs"])
                elif o.get("type") == "image":
                    url = o.get("url")
                    said.append(f"[image: {url}]" if isinstance(url, str) and not url.startswith("data:") else
                                "[image]")
            output = "\n".join(x for x in said if x) or output
        if isinstance(output, str) and output.strip():  # an MCP server's answer, the code's output, the call carries
            out.append({"text": output, "role": "tool", "metadata": {"tool_call_id": item_id or call_id}}
                       if item_id or call_id else {"text": output, "role": "tool"})
    if metadata:
        item["metadata"] = {**item.get("metadata", {}), **metadata}
    items = [item, *out]
    if when is not None:
        for it in items:
            it["timestamp"] = when
    name = _responses_name(obj)
    records = []
    for k, it in enumerate(items):
        ident = None if name is None else source_id(RESPONSES, {"id": name, "type": kind, "part": k})
        # the item as written, less its status, which the same item has "in_progress" in a stream and "completed" after
        digest = None if name is None else source_digest(
            RESPONSES, {"item": {key: v for key, v in obj.items() if key != "status"}, "part": k})
        records.append(Record(it, path, line, digest=digest, ident=ident))
    return records


def _responses_name(obj: dict[str, Any]) -> str | None:
    """What names a Responses API item: a call of a function or a custom tool its ``call_id`` (which an input built
    by hand writes without the call's ``id``, and its output answers), another item its ``id`` (else a
    ``call_id``); None for an item without either (a message a request's caller wrote)."""
    ids = [obj.get(key) for key in (("call_id", "id") if obj.get("type") in ("function_call", "custom_tool_call")
                                    else ("id", "call_id"))]
    return next((v for v in ids if isinstance(v, str) and v), None)


# How many items without a name a list may open with, before its first named item, that are held back (JSONL is
# read as a stream) to be named by it; those of a longer opening are stored as items without a name are
_RESPONSES_OPENING = 1000


class _ResponsesPlaces:
    """Gives the records of the Responses API items without a name (:func:`_responses_name`: the messages a request's
    caller wrote, a developer's instructions) a digest of the item and its place: after the nearest named item
    before it (its name and how many items on), or, for the items a list opens with, before its first named item.
    A later request's input repeats the earlier items in their places, while the ids of a response's items are
    the API's own, so the same item in a longer list has the same digest, and the same words in another
    conversation another. An item of a list without a named item has none (stored each time, as a message of a
    JSONL file is). :meth:`feed` takes each item with its records, in the list's order, and gives the records
    back once their digests are known; :meth:`end` the ones still held back."""

    def __init__(self) -> None:
        self.after: str | None = None
        self.since = 0
        self.opening: list[tuple[dict[str, Any], list[Record]]] | None = []

    @staticmethod
    def _placed(obj: dict[str, Any], records: list[Record], place: dict[str, Any]) -> list[Record]:
        item = {key: v for key, v in obj.items() if key != "status"}
        for k, rec in enumerate(records):
            rec.digest = source_digest(RESPONSES, {"item": item, "part": k, **place})
        return records

    def feed(self, obj: Any, records: list[Record]) -> list[Record]:
        if not records:  # an item left out
            return records
        name = _responses_name(obj)
        if name is not None:
            return self.name(name) + records
        if self.after is not None:
            self.since += 1
            return self._placed(obj, records, {"after": self.after, "k": self.since})
        if self.opening is None:  # an opening too long to hold
            return records
        self.opening.append((obj, records))
        if len(self.opening) > _RESPONSES_OPENING:
            return self.end()
        return []

    def name(self, name: str | None) -> list[Record]:
        """A named item comes next (or an item the API wrote without an id, ``name`` None, which places nothing):
        the records held back, placed before it."""
        if name is None:
            return []
        held, self.opening = self.opening or [], None
        self.after, self.since = name, 0
        return [rec for j, (o, recs) in enumerate(held)
                for rec in self._placed(o, recs, {"before": name, "k": len(held) - j})]

    def end(self) -> list[Record]:
        held, self.opening = self.opening or [], None
        return [rec for _, recs in held for rec in recs]


def _responses_document(doc: Any) -> list[Record] | None:
    """A document of Responses API items: a list of them (a request's ``input``, a response's ``output``), or a
    response itself (``{"object": "response", "created_at", "output": [...]}``, its items at its time); None for
    any other document."""
    if isinstance(doc, dict) and doc.get("object") == "response" and "output" in doc:
        items = doc["output"]
        if not isinstance(items, list):
            raise SourceError(("output",), f"field 'output' must be a list of items, got {_kind(items)}", "output")
        created = doc.get("created_at")
        if created is not None and (isinstance(created, bool) or not isinstance(created, (int, float))):
            raise SourceError((), f"field 'created_at' must be seconds since 1970, got {_kind(created)}",
                              "created_at")
        try:
            when = None if created is None else datetime.fromtimestamp(created, timezone.utc)
        except (OverflowError, ValueError, OSError):
            raise SourceError((), f"field 'created_at' must be seconds since 1970, got {created!r}",
                              "created_at") from None
        return [rec for k, obj in enumerate(items) for rec in responses_records(obj, ("output", k), when=when)]
    if isinstance(doc, list) and any(responses_item(obj) for obj in doc):
        places = _ResponsesPlaces()
        got = [rec for k, obj in enumerate(doc) for rec in places.feed(obj, responses_records(obj, (k,)))]
        return got + places.end()
    return None


# Claude Code's session transcripts, ~/.claude/projects/<project>/<session>.jsonl: a line per event, {"type", "uuid",
# "parentUuid", "sessionId", "timestamp", "isSidechain", "message": {"role", "content"}, ...}. The prompts ("user"
# lines whose content is a string or text blocks), the answers ("assistant" lines, a content block or a few each) and
# the tools' results ("user" lines of tool_result blocks) are messages; the other lines are the tool's own records.
CLAUDE_CODE = "claude-code"
_CLAUDE_CODE_KEYS = ("sessionId", "parentUuid", "leafUuid", "uuid")
# Kinds of line Claude Code writes for itself, named so that no other format's line is (a first line of one of them,
# or with one of _CLAUDE_CODE_KEYS, is a transcript's); in a transcript, every line of a kind other than "user" and
# "assistant" is one of its own ("summary", "system", "progress", ...), left out
_CLAUDE_CODE_OWN = frozenset({"file-history-snapshot", "queue-operation", "custom-title", "ai-title",
                              "permission-mode", "last-prompt", "worktree-state", "pr-link"})
_CLAUDE_CODE_THINKING = ("thinking", "redacted_thinking")


def claude_code_line(head: Any) -> bool:
    """Whether ``head``, a JSONL file's first line, is a line of a Claude Code transcript."""
    return (isinstance(head, dict) and isinstance(head.get("type"), str) and "text" not in head and "role" not in head
            and (any(k in head for k in _CLAUDE_CODE_KEYS) or head["type"] in _CLAUDE_CODE_OWN))


def claude_code_records(src: Source, lines: Callable[[], Iterator[str]]) -> Iterator[Record]:
    """The messages of a Claude Code transcript, a line at a time. A ``user`` line is the user's prompt (role user)
    or, when its content is ``tool_result`` blocks, the tools' output (role tool, the ``tool_use_id`` as
    ``metadata["tool_call_id"]``); an ``assistant`` line is what the model wrote, a ``tool_use`` block the line
    ``[tool call name(input)]``. Each has its ``timestamp``, its ``sessionId`` as session and its ``uuid`` as
    identity (:func:`source_id`: a session resumed into a new file repeats the earlier lines, stored once). Left out:
    the lines Claude Code writes for itself (``summary``, ``system``, ``file-history-snapshot``, ``permission-mode``,
    ..., any kind but ``user`` and ``assistant``), the ``isMeta``
    lines it adds to a prompt (the output of a local command, a caveat), the ``isCompactSummary`` line that sums up
    the earlier messages when it compacts the conversation, the model's ``thinking`` blocks, and a line without
    words (of thinking alone, or an empty text block). A sub-agent's messages (``isSidechain``) are kept, with ``metadata["sidechain"]``."""
    file = src.file
    n = 0
    for lineno, line in _nonblank(lines()):
        obj = _json_line(file, lineno, line)
        try:
            rec = _claude_code_record(obj)
            if rec is not None:
                _check_depth(rec.item, ())
        except SourceError as exc:
            raise InvalidInput(f"{file}:{lineno}: {exc.message}") from None
        if rec is not None:
            rec.line = lineno
            n += 1
            yield rec
    if not n:
        raise InvalidInput(f"{file}: the Claude Code transcript holds no messages")


def _claude_code_record(obj: Any) -> Record | None:
    if not isinstance(obj, dict):
        raise SourceError((), f"expected a JSON object per line (a line of a Claude Code transcript), got {_kind(obj)}")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise SourceError((), f"field 'type' must name the line's kind ('user', 'assistant', ...), got {_kind(kind)}",
                          "type")
    if kind not in ("user", "assistant"):
        return None  # Claude Code's own record (a title, a mode, a snapshot of files, a kind newer than these)
    for key in ("isMeta", "isSidechain", "isCompactSummary"):
        if obj.get(key) is not None and not isinstance(obj[key], bool):
            raise SourceError((), f"field {key!r} must be true or false, got {_kind(obj[key])}", key)
    if obj.get("isMeta") or obj.get("isCompactSummary"):
        return None
    msg = obj.get("message")
    if not isinstance(msg, dict):
        raise SourceError((), f"field 'message' must be an object {{\"role\", \"content\"}}, got {_kind(msg)}",
                          "message")
    if msg.get("role") != kind:
        raise SourceError((), f"field 'message.role' must be {kind!r} on a {kind!r} line, got {msg.get('role')!r}",
                          "message")
    content = msg.get("content")
    if isinstance(content, list):
        content = [b for b in content if not (isinstance(b, dict) and b.get("type") in _CLAUDE_CODE_THINKING)]
    elif not isinstance(content, str):
        raise SourceError((), f"field 'message.content' must be a string or a list of content blocks, got "
                              f"{_kind(content)}", "message")
    try:
        if not _content_text(content, (), "message.content").strip():
            # the model's thinking alone, or an empty text block (Claude Code writes the blocks an endpoint streams
            # as they come, an empty one too)
            return None
        item = openai_item({"role": kind, "content": content}, ())
    except SourceError as exc:
        raise SourceError((), exc.message if exc.message.startswith("field 'message") else
                          f"field 'message': {exc.message}", "message") from None
    item["timestamp"] = _iso_time(obj.get("timestamp"), (), "timestamp")
    session = obj.get("sessionId")
    if session is not None:
        if not isinstance(session, str) or not session:
            raise SourceError((), f"field 'sessionId' must be a non-empty string, got {_kind(session)}", "sessionId")
        item["session_id"] = session
    if obj.get("isSidechain"):
        item["metadata"] = {**item.get("metadata", {}), "sidechain": True}
    uuid = _id_field(obj, (), "uuid")
    if uuid is None:
        return Record(item)
    # the line's identity and words: not its session, which a resumed session's copy of the line changes
    return Record(item, digest=source_digest(CLAUDE_CODE, {"uuid": uuid, "message": msg}),
                  ident=source_id(CLAUDE_CODE, {"uuid": uuid}))


# LangChain's messages as langchain_core writes them: messages_to_dict, [{"type": "human", "data": {"content", "type",
# "name", "id", ...}}], and dumpd (or dumps), {"lc": 1, "type": "constructor", "id": [..., "HumanMessage"], "kwargs":
# {"content", "type", ...}}. A message's type gives its role; the chunks a stream yields are messages too.
_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool",
                    "developer": "system", "HumanMessageChunk": "user", "AIMessageChunk": "assistant",
                    "SystemMessageChunk": "system", "ToolMessageChunk": "tool", "FunctionMessageChunk": "tool"}
_LANGCHAIN_CLASSES = {"HumanMessage": "human", "AIMessage": "ai", "SystemMessage": "system", "ToolMessage": "tool",
                      "FunctionMessage": "function", "ChatMessage": "chat", "HumanMessageChunk": "HumanMessageChunk",
                      "AIMessageChunk": "AIMessageChunk", "SystemMessageChunk": "SystemMessageChunk",
                      "ToolMessageChunk": "ToolMessageChunk", "FunctionMessageChunk": "FunctionMessageChunk",
                      "ChatMessageChunk": "ChatMessageChunk"}
LANGCHAIN = "langchain"


def langchain_message(obj: Any) -> bool:
    """Whether ``obj`` is a LangChain message as ``messages_to_dict`` or ``dumpd`` writes it."""
    if not isinstance(obj, dict):
        return False
    if obj.get("lc") == 1 and obj.get("type") == "constructor" and isinstance(obj.get("id"), list):
        return True
    return set(obj) == {"type", "data"} and isinstance(obj["data"], dict)


def langchain_record(obj: Any, path: Path, line: int | None = None) -> Record:
    """One LangChain message as a record: its ``content`` (a string or content blocks) the text, its type the role
    (``human`` user, ``ai`` assistant, ``tool`` and ``function`` tool, ``chat`` its ``role``), its ``name`` the
    speaker; an AI message's ``tool_calls`` (``{"name", "args", "id"}``) the lines ``[tool call name(args)]`` and
    ``metadata["tool_calls"]`` as a chat completion writes them; a tool message's ``tool_call_id`` in metadata. Its
    ``id``, when it has one, is its identity (:func:`source_id`)."""
    if not langchain_message(obj):
        raise SourceError(path, "expected a LangChain message, {\"type\", \"data\"} as messages_to_dict writes it or "
                                "{\"lc\": 1, \"type\": \"constructor\", \"id\", \"kwargs\"} as dumpd does")
    if "lc" in obj:
        cls = obj["id"][-1] if obj["id"] else None
        kind = _LANGCHAIN_CLASSES.get(cls) if isinstance(cls, str) else None
        if kind is None:
            raise SourceError(path, f"field 'id' must name a message class ({', '.join(sorted(_LANGCHAIN_CLASSES))}), "
                                    f"got {cls!r}", "id")
        data = obj.get("kwargs")
        if not isinstance(data, dict):
            raise SourceError(path, f"field 'kwargs' must be an object, got {_kind(data)}", "kwargs")
        where = "kwargs"
    else:
        kind, data, where = obj["type"], obj["data"], "data"
    if kind in ("chat", "ChatMessageChunk"):
        role = data.get("role")
        if not isinstance(role, str) or role not in _OPENAI_ROLES:
            raise SourceError(path, f"field '{where}.role' must be one of {sorted(_OPENAI_ROLES)}, got {role!r}",
                              where)
        role = _OPENAI_ROLES[role]
    elif isinstance(kind, str) and kind in _LANGCHAIN_ROLES:
        role = _LANGCHAIN_ROLES[kind]
    else:
        raise SourceError(path, f"field 'type' must be a message type ({', '.join(sorted(_LANGCHAIN_ROLES))}, chat), "
                                f"got {kind!r}", "type")
    content = data.get("content")
    if not isinstance(content, (str, list)):
        raise SourceError(path, f"field '{where}.content' must be a string or a list of content blocks, got "
                                f"{_kind(content)}", where)
    metadata: dict[str, Any] = {}
    calls = data.get("tool_calls") or []
    if not isinstance(calls, list):
        raise SourceError(path, f"field '{where}.tool_calls' must be a list, got {_kind(calls)}", where)
    if calls and isinstance(content, list):
        # a provider's own blocks of the calls (Anthropic's tool_use) beside LangChain's tool_calls: the calls once
        called = {call.get("id") for call in calls if isinstance(call, dict) and isinstance(call.get("id"), str)}
        content = [b for b in content if not (isinstance(b, dict) and b.get("type") in ("tool_use", "tool_call")
                                              and isinstance(b.get("id"), str) and b["id"] in called)]
    text = _content_text(content, path, f"{where}.content")
    if calls:
        lines, made = [], []
        for k, call in enumerate(calls):
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise SourceError(path, f"field '{where}.tool_calls[{k}].name' must be a string", where)
            if call.get("id") is not None and not isinstance(call["id"], str):
                raise SourceError(path, f"field '{where}.tool_calls[{k}].id' must be a string, got "
                                        f"{_kind(call['id'])}", where)
            args = call.get("args", {})
            said = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)  # as LangChain's own
            lines.append(f"[tool call {call['name']}({said})]")
            made.append({"id": call.get("id"), "type": "function",
                         "function": {"name": call["name"], "arguments": said}})
        text = "\n".join([text, *lines]) if text.strip() else "\n".join(lines)
        metadata["tool_calls"] = made
    if not text.strip():
        raise SourceError(path, f"field '{where}.content' is empty (and there are no tool calls)", where)
    call_id = data.get("tool_call_id")
    if call_id is not None:
        if not isinstance(call_id, str):
            raise SourceError(path, f"field '{where}.tool_call_id' must be a string, got {_kind(call_id)}", where)
        metadata["tool_call_id"] = call_id
    item: dict[str, Any] = {"text": text, "role": role}
    name = data.get("name")
    if name is not None:
        if not isinstance(name, str):
            raise SourceError(path, f"field '{where}.name' must be a string, got {_kind(name)}", where)
        item["speaker"] = name
    if metadata:
        item["metadata"] = metadata
    mid = data.get("id")
    if mid is not None and not isinstance(mid, str):
        raise SourceError(path, f"field '{where}.id' must be a string, got {_kind(mid)}", where)
    if not mid:
        return Record(item, path, line)
    return Record(item, path, line, digest=source_digest(LANGCHAIN, {"id": mid, "message": obj}),
                  ident=source_id(LANGCHAIN, {"id": mid}))


# LlamaIndex's ChatMessage as model_dump() writes it: {"role", "additional_kwargs", "blocks": [{"block_type": "text",
# "text"}, {"block_type": "image", "url", ...}, ...]}.
_LLAMAINDEX_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system",
                     "tool": "tool", "function": "tool", "chatbot": "assistant", "model": "assistant"}


def llamaindex_message(obj: Any) -> bool:
    """Whether ``obj`` is a LlamaIndex ``ChatMessage`` as ``model_dump`` writes it (its content in ``blocks``)."""
    return isinstance(obj, dict) and "blocks" in obj and "role" in obj and "content" not in obj and "text" not in obj


def llamaindex_record(obj: Any, path: Path, line: int | None = None) -> Record:
    """One LlamaIndex ``ChatMessage``: its text blocks joined, other blocks a marker (``[image: url]``,
    ``[document: title]``, ``[thinking]``), a ``tool_call`` block the line ``[tool call name(kwargs)]``; its role
    (``chatbot`` and ``model``, other providers' names of the assistant, are ``assistant``); a tool message's
    ``additional_kwargs["tool_call_id"]`` in metadata and its ``name`` the speaker. LlamaIndex gives a message no
    id."""
    if not llamaindex_message(obj):
        raise SourceError(path, "expected a LlamaIndex ChatMessage {\"role\", \"blocks\", \"additional_kwargs\"}")
    role = obj.get("role")
    if not isinstance(role, str) or role not in _LLAMAINDEX_ROLES:
        raise SourceError(path, f"field 'role' must be one of {sorted(_LLAMAINDEX_ROLES)}, got {role!r}", "role")
    blocks = obj["blocks"]
    if not isinstance(blocks, list):
        raise SourceError(path, f"field 'blocks' must be a list of content blocks, got {_kind(blocks)}", "blocks")
    extra = obj.get("additional_kwargs")
    if extra is not None and not isinstance(extra, dict):
        raise SourceError(path, f"field 'additional_kwargs' must be an object, got {_kind(extra)}",
                          "additional_kwargs")
    extra = extra or {}
    pieces, calls = [], []
    for k, block in enumerate(blocks):
        kind = block.get("block_type") if isinstance(block, dict) else None
        if not isinstance(kind, str):
            raise SourceError(path, f"field 'blocks[{k}]' must be a content block with a 'block_type'", "blocks")
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise SourceError(path, f"field 'blocks[{k}].text' must be a string", "blocks")
            pieces.append(block["text"])
        elif kind == "tool_call":
            if not isinstance(block.get("tool_name"), str):
                raise SourceError(path, f"field 'blocks[{k}].tool_name' must be a string", "blocks")
            if block.get("tool_call_id") is not None and not isinstance(block["tool_call_id"], str):
                raise SourceError(path, f"field 'blocks[{k}].tool_call_id' must be a string, got "
                                        f"{_kind(block['tool_call_id'])}", "blocks")
            args = block.get("tool_kwargs", {})
            said = args if isinstance(args, str) else json.dumps(args)
            pieces.append(f"[tool call {block['tool_name']}({said})]")
            calls.append({"id": block.get("tool_call_id"), "type": "function",
                          "function": {"name": block["tool_name"], "arguments": said}})
        elif kind in ("image", "audio", "video", "document"):
            url, title = block.get("url"), block.get("title")
            named = url if isinstance(url, str) and url and not url.startswith("data:") else (
                title if isinstance(title, str) and title.strip() else None)
            pieces.append(f"[{kind}: {named}]" if named else f"[{kind}]")
        else:
            pieces.append(f"[{kind}]")
    text = "\n".join(p for p in pieces if p)
    if not text.strip():
        raise SourceError(path, "field 'blocks' holds no text (and no tool calls)", "blocks")
    item: dict[str, Any] = {"text": text, "role": _LLAMAINDEX_ROLES[role]}
    metadata: dict[str, Any] = {}
    if calls:
        metadata["tool_calls"] = calls
    if role in ("tool", "function"):
        call_id = extra.get("tool_call_id")
        if isinstance(call_id, str) and call_id:
            metadata["tool_call_id"] = call_id
        if isinstance(extra.get("name"), str) and extra["name"]:
            item["speaker"] = extra["name"]
    if metadata:
        item["metadata"] = metadata
    return Record(item, path, line)


def agent_trace_records(doc: Any) -> tuple[str, list[Record]] | None:
    """The records of a JSON document of agent messages: Responses API items, LangChain or LlamaIndex messages, as
    ``(format, records)``; None for another document. Every element of a list must be of the kind of its first. The
    list may be an object's ``messages``, as a LangGraph state holds them (``{"messages": [...]}``)."""
    got = _responses_document(doc)
    if got is not None:
        return RESPONSES, got
    base: Path = ()
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        doc, base = doc["messages"], ("messages",)
        if not doc or not (langchain_message(doc[0]) or llamaindex_message(doc[0])):
            return None
    if not isinstance(doc, list) or not doc:
        return None
    if langchain_message(doc[0]):
        return LANGCHAIN, [langchain_record(obj, base + (k,)) for k, obj in enumerate(doc)]
    if llamaindex_message(doc[0]):
        return "llamaindex", [llamaindex_record(obj, base + (k,)) for k, obj in enumerate(doc)]
    return None


def agent_trace_line(obj: Any, line: int) -> list[Record] | None:
    """The records of one JSONL line that is a Responses API item, a LangChain or a LlamaIndex message; None for a
    line of another kind. A line may be a whole response (``{"object": "response", "output": [...]}``)."""
    if isinstance(obj, dict) and obj.get("object") == "response" and "output" in obj:
        records = _responses_document(obj) or []
        for rec in records:
            rec.path, rec.line = (), line  # the line is the place, not the item's path inside it
        return records
    if responses_item(obj):
        return responses_records(obj, (), line)
    if langchain_message(obj):
        return [langchain_record(obj, (), line)]
    if llamaindex_message(obj):
        return [llamaindex_record(obj, (), line)]
    return None


# English month names and their three-letter forms ("Sept" too). The files write them in English whatever the
# reader's locale, while ``strptime``'s %B and %p follow the process's LC_TIME, which an application may set.
_MONTHS = {name.lower()[:k]: m for m, name in enumerate(
    ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
     "December"), start=1) for k in (3, len(name))} | {"sept": 9}
_BEAM_ANCHOR = re.compile(r"([A-Za-z]+)-(\d{1,2})-(\d{4})")
_LOCOMO_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s*(\d{4})",
                          re.IGNORECASE)


def _english_date(year: str, month: str, day: str, hour: int = 0, minute: int = 0) -> datetime:
    """The date of an English month name, ``ValueError`` for a name that is none or a day the month lacks."""
    number = _MONTHS.get(month.lower())
    if number is None:
        raise ValueError(f"no month {month!r}")
    return datetime(int(year), number, int(day), hour, minute)


def parse_beam_anchor(value: Any, path: Path) -> datetime:
    """BEAM's ``time_anchor`` ("March-15-2024"), or ISO-8601."""
    if isinstance(value, str):
        m = _BEAM_ANCHOR.fullmatch(value.strip())
        if m is not None:
            try:
                return _english_date(m[3], m[1], m[2])
            except ValueError:
                pass
        try:
            return parse_iso(value.strip())
        except ValueError:
            pass
    raise SourceError(path, f"field 'time_anchor' must be a date like 'March-15-2024', got {value!r}", "time_anchor")


def beam_records(batches: list) -> Iterator[Record]:
    latest: datetime | None = None
    for b, batch in enumerate(batches):
        if not isinstance(batch, dict):
            raise SourceError((b,), f"expected a batch object, got {_kind(batch)}")
        number = batch.get("batch_number")
        if isinstance(number, bool) or not isinstance(number, (int, str)):
            raise SourceError((b,), f"field 'batch_number' must be a number, got {_kind(number)}")
        if batch.get("time_anchor") is not None:
            latest = parse_beam_anchor(batch["time_anchor"], (b,))
        turns = batch.get("turns")
        if not isinstance(turns, list):
            raise SourceError((b,), f"field 'turns' must be a list of turns, got {_kind(turns)}")
        for t, turn in enumerate(turns):
            if not isinstance(turn, list):
                raise SourceError((b, "turns", t), f"expected a list of messages, got {_kind(turn)}")
            for m, msg in enumerate(turn):
                path = (b, "turns", t, m)
                if not isinstance(msg, dict):
                    raise SourceError(path, f"expected a message object, got {_kind(msg)}")
                if msg.get("time_anchor") is not None:
                    latest = parse_beam_anchor(msg["time_anchor"], path)
                role = msg.get("role")
                if role not in ("user", "assistant", "system", "tool"):
                    raise SourceError(path, f"field 'role' must be 'user' or 'assistant', got {role!r}", "role")
                meta = {"chat_id": msg["id"]} if "id" in msg else {}
                yield Record({"text": _text_field(msg, "content", path), "role": role, "speaker": role,
                              "timestamp": latest, "session_id": f"batch-{number}", "metadata": meta}, path)


def _parse_locomo_date(text: str) -> datetime:
    # "1:56 pm on 8 May, 2023"
    m = _LOCOMO_DATE.fullmatch(text.strip())
    if m is None or not 1 <= int(m[1]) <= 12:
        raise ValueError(f"not a date like '1:56 pm on 8 May, 2023': {text!r}")
    return _english_date(m[6], m[5], m[4], int(m[1]) % 12 + (12 if m[3].lower() == "p" else 0), int(m[2]))


def locomo_records(sample: Any, path: Path) -> Iterator[Record]:
    """Messages of one LoCoMo-format sample: turn text (plus its image caption), speaker, the session's date
    (turn k one second after turn k-1, to keep their order), ``session_<N>`` and ``metadata["dia_id"]``."""
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        raise SourceError(path, "field 'conversation' must be an object of sessions")
    group = sample.get("sample_id")
    # --split names each conversation's namespace after it: one without an id is named by its place in the file,
    # not merged into the base namespace with the other unnamed ones
    group = str(group) if group is not None and str(group).strip() else f"sample-{(path[0] if path else 0) + 1}"
    conv = sample["conversation"]
    keys = sorted((k for k in conv if k.startswith("session_") and k.split("_")[1].isascii()
                   and k.split("_")[1].isdigit() and k.count("_") == 1), key=lambda k: int(k.split("_")[1]))
    for key in keys:
        turns = conv[key]
        if not isinstance(turns, list):
            raise SourceError((*path, "conversation"), f"field {key!r} must be a list of turns, got {_kind(turns)}")
        date = conv.get(f"{key}_date_time")
        t0 = None
        if date is not None:
            try:
                t0 = _parse_locomo_date(date)
            except (TypeError, ValueError, AttributeError):
                raise SourceError((*path, "conversation"), f"field '{key}_date_time' must look like "
                                                           f"'1:56 pm on 8 May, 2023', got {date!r}") from None
        for k, turn in enumerate(turns):
            tpath = (*path, "conversation", key, k)
            if not isinstance(turn, dict):
                raise SourceError(tpath, f"expected a turn object, got {_kind(turn)}")
            text = _text_field(turn, "text", tpath)
            if turn.get("blip_caption"):
                text += f" [image: {turn['blip_caption']}]"
            yield Record({
                "text": text,
                "speaker": turn.get("speaker"),
                "timestamp": (t0 + timedelta(seconds=k)) if t0 else None,
                "session_id": key,
                "metadata": {"dia_id": turn.get("dia_id")},
            }, tpath, group=group)


def locomo_items(sample: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Messages of one LoCoMo-format conversation, as ``Memory.add_many`` items."""
    for rec in locomo_records(sample, ()):
        yield rec.item


# ------------------------------------------------------------------------------------- positions on demand


def _parse_with_offsets(text: str) -> tuple[Any, dict[int, int]]:
    """``json.loads(text)`` with the offset of every object and list (by identity), via the pure-Python
    scanner: slow, so only used to name the line of a problem that a fast parse already found."""
    offsets: dict[int, int] = {}

    def parse_object(s_and_end, *args):
        obj, end = json.decoder.JSONObject(s_and_end, *args)
        offsets[id(obj)] = s_and_end[1] - 1
        return obj, end

    def parse_array(s_and_end, *args):
        arr, end = json.decoder.JSONArray(s_and_end, *args)
        offsets[id(arr)] = s_and_end[1] - 1
        return arr, end

    dec = json.JSONDecoder()
    dec.parse_object = parse_object
    dec.parse_array = parse_array
    dec.scan_once = json.scanner.py_make_scanner(dec)
    return dec.decode(text), offsets


# --------------------------------------------------------------------------------------------- messaging apps

# A WhatsApp export line that starts a message: the app writes the phone's short date and time in the phone's
# language (CLDR's patterns), then " - " (Android), or the two in brackets (iOS), or, in iOS exports before 2017, the
# two followed by a colon ("12.07.2017, 22:35:22: Ann: text", "3/24/14, 1:59:59 PM: Ann: text"); then "Sender: text"
# or a notice. A file holds one of the three forms, so a line in another one goes on the message before it. What
# the languages put there, as exports show it:
#
# * the date's three numbers in the phone's order, joined by "/", "." or "-", a space after the dot in Korean,
#   Hungarian and Croatian with a closing dot ("2024. 3. 11.", "11. 03. 2024."); digits of the phone's script
#   (Arabic "١١/٣/٢٠٢٤", Persian "۲۰۲۱/۵/۳۰", Bengali, Devanagari), with right-to-left marks around them in Arabic
#   ("٢٤\u200f/٤\u200f/٢٠٢٢"); the year of the phone's calendar: Thai phones count Buddhist-era years (2567, or
#   67, is 2024; iOS in English writes "3/18/2565 BE"), iPhones on the Japanese calendar the era ("3/27/R4" is
#   2022, the fourth year of Reiwa);
# * between date and time a comma (Arabic and Persian "،"), a short word (Finnish "klo", French "à", German "um",
#   Bulgarian "г.,") or only a space (Chinese, Japanese, Korean; iOS in Chinese a thin space U+2009);
# * the time, 24-hour or 12-hour with a dot or colon ("21.25", Indonesian, Finnish, Danish), its day period
#   before it (Korean "오후 9:00", Chinese "下午9:00", Japanese "午後9:00", Turkish "ÖS 9:00", Hungarian "du. 9:00")
#   or after it ("9:00 PM", "9:00 p. m.", Arabic "٩:٠٠ م", Persian "ب.ظ.", Greek "μ.μ.", Vietnamese "9:00 CH"),
#   after a space, a no-break space or a narrow no-break space (U+202F, newer Android and iOS);
# * Vietnamese puts the time first ("21:00, 11/03/2024").
#
# The line is matched as written, with direction marks before it; the message text after the head is the person's
# own, kept as the file has it (French puts a no-break space before "?" and ":").
_SP = "[ \u00a0\u202f\u2009]"
_MARK = "[\u200e\u200f\u061c]"
# A day period as the phone writes it (CLDR's abbreviated day periods; Chinese iPhones use the flexible ones, from
# 凌晨 "before dawn" to 晚上 "evening"), spelled without dots and spaces, and the half of the day it names
_PERIODS = {
    "am": "am", "pm": "pm", "오전": "am", "오후": "pm", "午前": "am", "午後": "pm",
    "上午": "am", "下午": "pm", "凌晨": "am", "早上": "am", "清晨": "am", "午夜": "am", "中午": "pm", "晚上": "pm",
    "ص": "am", "م": "pm", "قظ": "am", "بظ": "pm", "πμ": "am", "μμ": "pm", "sa": "am", "ch": "pm",
    "öö": "am", "ös": "pm", "pg": "am", "ptg": "pm", "fm": "am", "em": "pm", "de": "am", "du": "pm",
    "dop": "am", "odp": "pm", "ap": "am", "ip": "pm", "vorm": "am", "nachm": "pm", "vm": "am", "nm": "pm",
    "לפנה״צ": "am", "אחה״צ": "pm", "ก่อนเที่ยง": "am", "หลังเที่ยง": "pm", "дп": "am", "пп": "pm",
    "eparadites": "am", "epasdites": "pm", "मपू": "am", "मउ": "pm",
}


def _period_pattern(word: str) -> str:
    """A day period as written: its letters in order, each may be followed by a dot and a space ("p. m.", "μ.μ.",
    "du.", "e pasdites")."""
    return "".join(re.escape(ch) + rf"\.?{_SP}?" for ch in word[:-1]) + re.escape(word[-1]) + r"\.?"


_PERIOD = "(?:" + "|".join(_period_pattern(w) for w in sorted(_PERIODS, key=len, reverse=True)) + ")"
_NUMBER = rf"{_MARK}*(?:[HR](?=\d))?\d{{1,4}}{_MARK}*"
_DATE = (rf"(?P<a>{_NUMBER})(?P<s>[./-]){_SP}?(?P<b>{_NUMBER})(?P=s){_SP}?(?P<c>{_NUMBER})(?P<dot>\.)?"
         rf"(?:{_SP}BE)?")
_TIME = (rf"(?:(?P<pb>{_PERIOD}){_SP}?)?(?P<t>\d{{1,2}}[:.]\d{{2}}(?:[:.]\d{{2}})?)"
         rf"(?:{_SP}?(?P<pa>{_PERIOD})(?![^\W\d_]))?")
# between date and time: a comma, or a short word that is no day period ("klo", "à", "um", "г.,"), and a space
_GLUE = rf"(?:{_SP}?[,،]|{_SP}(?!{_PERIOD}{_SP}?\d)[^\W\d_]{{1,3}}\.?,?)?{_SP}"
_HEADS = (re.compile(_DATE + _GLUE + _TIME, re.IGNORECASE), re.compile(_TIME + r",?" + _SP + _DATE, re.IGNORECASE))
_HEAD = "(?:" + "|".join(re.sub(r"\(\?P<\w+>", "(?:", h.pattern).replace("(?P=s)", "[./-]") for h in _HEADS) + ")"
_WHATSAPP = re.compile(rf"^[\s\u200e\u200f\u061c\ufeff]*(?:\[(?P<ios>{_HEAD})\]{_SP}|(?P<android>{_HEAD}){_SP}-{_SP}"
                       rf"|(?P<old_ios>{_HEAD}):{_SP})(?P<rest>.*)$", re.IGNORECASE)
# the text may start on the next line; a name may hold quotation marks, closed before the colon ('Robert "Bob" Smith',
# 'Ann «Nana» B'), while a notice quotes what holds the colon (in its language's marks: 'Ann changed the subject from
# "Trip" to "Trip: Lisbon"', 'Ann hat den Betreff zu „Trip: Lisbon“ geändert', 'Ann a changé le sujet en « Trip :
# Lisbonne »'): see _closed
_SENDER = re.compile(r"^(?P<who>[^:\n]{1,80}?):(?: (?P<text>.*))?$", re.DOTALL)


def _closed(name: str) -> bool:
    """Whether every quotation mark opened in ``name`` is closed in it (German opens with „ and closes with “, which
    opens in English: the three are counted together)."""
    if name.isascii():  # the other marks are not ASCII: most names are counted for '"' alone
        return name.count('"') % 2 == 0
    return (name.count('"') % 2 == 0 and sum(map(name.count, "„“”")) % 2 == 0
            and all(name.count(a) == name.count(b) for a, b in ("«»", "‹›", "「」", "『』")))
# What the app writes in place of a message it did not export (iOS ends the deleted ones with a full stop; older
# iOS exports give the encryption notice a sender and no U+200E). Android writes them in the phone's language without
# a mark (iOS marks its own with U+200E in every language, left out above): the media left out and the deleted
# messages in German, Spanish, French, Portuguese, Italian, Dutch, Indonesian, Turkish and Russian too.
_PLACEHOLDERS = re.compile(r"^(?:<media omitted>|<attached: [^>]*>|(?:image|video|audio|sticker|gif|document|contact "
                           r"card) omitted|this message was deleted\.?|you deleted this message\.?|null|"
                           r"waiting for this message(?:\. this may take a while)?\.?|messages and "
                           r"calls are end-to-end encrypted\..*"
                           r"|<medien ausgeschlossen>|<multimedia omitido>|<médias omis>|<mídia oculta>|<media omessi>"
                           r"|<media weggelaten>|<media tidak disertakan>|<medya dahil edilmedi>|<без медиафайлов>"
                           r"|diese nachricht wurde gelöscht\.?|du hast diese nachricht gelöscht\.?"
                           r"|se eliminó este mensaje\.?|eliminaste este mensaje\.?|ce message a été supprimé\.?"
                           r"|vous avez supprimé ce message\.?|esta mensagem foi apagada\.?|você apagou esta mensagem\.?"
                           r"|questo messaggio è stato eliminato\.?|hai eliminato questo messaggio\.?"
                           r"|dit bericht is verwijderd\.?|je hebt dit bericht verwijderd\.?|pesan ini telah dihapus\.?"
                           r"|bu mesaj silindi\.?|данное сообщение удалено\.?)$", re.IGNORECASE | re.DOTALL)
# The line of a file sent in the chat, when the chat is exported with its media: iOS "<attached: 00000012-PHOTO-...jpg>",
# Android "IMG-20240312-WA0001.jpg (file attached)" (German "(Datei angehängt)", Spanish "(archivo adjunto)")
_ATTACHED = re.compile(r"^(?:<attached: ([^>]+)>|(.+?) \((?:file attached|datei angehängt|archivo adjunto)\))$",
                       re.IGNORECASE)
# What the app appends to a message that was edited (iOS puts a U+200E before it)
_EDITED = "<this message was edited>"


# The direction marks and embeddings the app writes around a name: U+200E, U+200F, U+061C, and the embedding Android
# puts a phone number in ("\u202a+351 912 345 678\u202c"), the isolates newer versions use (U+2066 to U+2069)
_BIDI = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")


def _plain(name: str) -> str:
    """A sender's name without the direction marks and with plain spaces for the no-break ones the app writes
    (a group member who is not a contact shows as "~\u202fAnn")."""
    return _BIDI.sub("", name).replace("\u202f", " ").replace("\u00a0", " ").strip()


@dataclass(slots=True)
class _Head:
    """The date and time at the start of a WhatsApp line, as written, and the rest of the line."""

    fields: tuple[str, str, str]   # the date's three numbers in the phone's order, direction marks left out
    sep: str                       # what joins them: "/", "." or "-"
    korean: bool                   # written "24. 3. 11.": dots and spaces, and a closing dot
    period: str | None             # the day period's text as written ("PM", "오후", "p. m."), None on a 24-hour clock
    half: str | None               # "am" or "pm", what the day period names
    clock: str                     # "21:00", "9.05.33"
    rest: str
    form: str = "android"          # "android" (" - "), "ios" ("[...]") or "old_ios" (a colon)


_MARKS = re.compile(_MARK)
_PERIOD_GAPS = re.compile(r"[.\s]")


def _whatsapp_head(line: str) -> _Head | None:
    """The head of a line that starts a WhatsApp message (or notice), or None for a line that goes on one."""
    m = _WHATSAPP.match(line)
    if m is None:
        return None
    form = "ios" if m["ios"] is not None else "android" if m["android"] is not None else "old_ios"
    head = m[form]
    for pattern in _HEADS:
        h = pattern.fullmatch(head)
        if h is not None:
            break
    else:  # the date's two separators differ: no date the app writes
        return None
    period = h["pb"] or h["pa"]
    # the marks are not ASCII: a date in ASCII digits (nearly every line) has none to take out
    fields = tuple(x if x.isascii() else _MARKS.sub("", x) for x in (h["a"], h["b"], h["c"]))
    korean = h["dot"] is not None and h["s"] == "." and re.match(_SP, head[h.end("s"):]) is not None
    # the pattern matches ignoring case, so the word is looked up case-folded (the long s "ſ" matches "s")
    half = _PERIODS.get(_PERIOD_GAPS.sub("", period.casefold())) if period else None
    if period and half is None:
        return None
    return _Head(fields, h["s"], korean, period, half, h["t"], m["rest"], form)


def _whatsapp_order(heads: Iterable[_Head]) -> tuple[bool, bool]:
    """(day first, year first) for the file's dates: a field above 12 tells day from month; a first field of four
    digits or of a Japanese era is a year (2024-03-12, 2024/3/11, 2024. 3. 11., R6/3/11), and so is a first one of
    two in Korean dates, which put a space after each dot and close with one ("24. 3. 11."; Croatian "11. 03. 2024."
    ends with the year). When every date could be read either way, the order under which the dates never go back in
    time wins (an export lists messages as they were sent: "11/03" then "02/04" is 11 March then 2 April, not 3
    November then 4 February); when both orders keep time moving forward, the field that changes more often from
    one date to the next is the day (a chat of 5, 6 and 7 March is no chat of 3 May, 3 June and 3 July); when
    neither changes more often (a chat of one day), the clock tells: "AM" / "PM" in capitals with a date of Latin
    digits joined by slashes is a US phone's (month first; "AM" / "PM" are also German, Russian, Bengali phones'
    words, whose dates are day first: "05.08.23", "১১/৩/২৪"); "am" / "pm" in small letters (British, Indian,
    Australian English) or with dots (Spanish "p. m.") and 24-hour times are day-first phones'."""
    # read in one pass, keeping no more than the last date: an export of millions of lines is not held as heads
    korean = long_year = year_first = us_clock = False
    first_max = second_max = firsts = seconds = 0
    day_first_forward = month_first_forward = True
    last: tuple[int, int, int] | None = None
    for h in heads:
        a, b = int(h.fields[0].lstrip("HR")), int(h.fields[1].lstrip("HR"))
        korean = korean or h.korean
        long_year = long_year or len(h.fields[2]) > 2
        year_first = year_first or a > 999 or h.fields[0][0] in "HR"
        first_max, second_max = max(first_max, a), max(second_max, b)
        us_clock = us_clock or ((h.period or "").upper() in ("AM", "PM") and h.period.isupper() and h.sep == "/"
                                and "".join(h.fields).isascii())
        if year_first:
            continue  # settled; the rest is not read as day and month
        year = _year(h.fields[2])
        if last is not None:
            day_first_forward = day_first_forward and (last[2], last[1], last[0]) <= (year, b, a)
            month_first_forward = month_first_forward and (last[2], last[0], last[1]) <= (year, a, b)
            # A chat goes on from day to day far more often than from month to month: of two dates that follow
            # each other, the field that changes is the day ("05/03" then "06/03" is 5 and 6 March, not 3 May and
            # 3 June)
            firsts += last[0] != a
            seconds += last[1] != b
        last = (a, b, year)
    if (korean and not long_year) or year_first:
        return False, True
    if first_max > 12:
        return True, False
    if second_max > 12:
        return False, False
    if day_first_forward != month_first_forward:
        return day_first_forward, False
    if firsts != seconds:
        return firsts > seconds, False
    return not us_clock, False


def _year(field: str) -> int:
    """The Gregorian year of a date's year field: an era of the Japanese calendar ("R4" is 2022, "H31" 2019), a
    Buddhist-era year (Thai phones: 2567 is 2024, and so is 67, as no WhatsApp chat is dated 2050 or later nor
    before 2009), or a year of the common era, two-digit ones in the 2000s."""
    if field[0] in "HR":
        return int(field[1:]) + (2018 if field[0] == "R" else 1988)
    year = int(field)
    if year >= 2400:
        return year - 543
    if year < 100:
        return year + (1957 if year >= 50 else 2000)
    return year


def _whatsapp_time(h: _Head, day_first: bool, year_first: bool) -> datetime:
    a, b, c = h.fields
    year, month, day = (a, b, c) if year_first else (c, a if not day_first else b, a if day_first else b)
    year, month, day = _year(year), int(month), int(day)
    parts = [int(x) for x in re.split(r"[:.]", h.clock)]
    hour, minute, second = parts[0], parts[1], parts[2] if len(parts) > 2 else 0
    if h.half:
        # a 12-hour clock counts 1 to 12, Japanese phones 0 to 11 ("午後0:30" is half past noon)
        if not 0 <= hour <= 12:
            raise ValueError(f"hour {hour} with {h.period!r}")
        hour = hour % 12 + (12 if h.half == "pm" else 0)
    return datetime(year, month, day, hour, minute, second)


def _read_whatsapp(file: str, text: str) -> Source:
    """A WhatsApp chat exported as text: one record per message, its continuation lines joined to it. Read in two
    passes over the lines, the first telling the order of the dates' fields, the second reading the messages: what
    is held is the messages read, not every line and head of the file besides."""
    src = Source(file, "whatsapp", text)
    order = _whatsapp_layout(lambda: _iter_lines(text))
    src.records.extend(_whatsapp_records(src, lambda: _iter_lines(text), order))
    return src


def _whatsapp_layout(lines: Callable[[], Iterator[str]]) -> tuple[str, bool, bool]:
    """(the form of the file's message lines, day first, year first), read in one pass over the lines."""
    form = next(h.form for h in map(_whatsapp_head, lines()) if h is not None)
    return (form, *_whatsapp_order(h for h in map(_whatsapp_head, lines()) if h is not None and h.form == form))


def _whatsapp_records(src: Source, lines: Callable[[], Iterator[str]], layout: tuple[str, bool, bool]
                      ) -> Iterator[Record]:
    """The messages of a WhatsApp export whose :func:`_whatsapp_layout` is ``layout``, one at a time: what is held
    is the message being read, not every line and head of the file."""
    file = src.file
    form, day_first, year_first = layout
    found = 0

    def heads() -> Iterator[tuple[int, _Head]]:
        for k, line in enumerate(lines()):
            h = _whatsapp_head(line)
            if h is not None and h.form == form:  # the file's form; others are message text
                yield k, h

    starts = heads()
    names: dict[str, str] = {}  # one string per sender, not one per message
    at, m = next(starts, (-1, None))
    # (line, time, sender, text lines, the file attached, the lines as written)
    current: tuple[int, datetime, str, list[str], str | None, list[str]] | None = None

    def flush() -> Record | None:
        if current is None:
            return None
        lineno, when, who, body, attached, raw = current
        message = "\n".join(body).strip()
        edited = message[-len(_EDITED):].lower() == _EDITED
        if edited:  # the app's marker, not the person's words: kept as a flag
            message = message[:-len(_EDITED)].strip()
        if message and not _PLACEHOLDERS.match(message):
            item = {"text": message, "speaker": who, "role": "user", "timestamp": when}
            meta: dict[str, Any] = {}
            if edited:
                meta["edited"] = True
            if attached:
                meta["attachments"] = [attached]
            if meta:
                item["metadata"] = meta
            while len(raw) > 1 and not raw[-1].strip():  # the blank lines a file's end leaves are no message's
                raw.pop()
            return Record(item, (), lineno, digest=source_digest("whatsapp", "\n".join(raw).lstrip("\ufeff")))
        return None

    for k, line in enumerate(lines()):
        if k != at:  # the message goes on (or the app's notice before it, which is left out with it)
            if current is not None:
                current[3].append(line.replace("\u200e", ""))
                current[5].append(line)
            continue
        h, (at, m) = m, next(starts, (-1, None))
        done = flush()
        if done is not None:
            found += 1
            yield done
        current = None
        try:
            when = _whatsapp_time(h, day_first, year_first)
        except ValueError as exc:
            raise InvalidInput(f"{file}:{k + 1}: not a date and time: {exc}") from None
        said = _SENDER.match(h.rest)
        if said is None or not _closed(said["who"]):
            # the app's own notice ("Messages and calls are end-to-end encrypted", "Ann joined")
            continue
        who = _plain(said["who"])
        attached = _ATTACHED.match((said["text"] or "").replace("\u200e", "").strip())
        if attached is not None:
            # a file sent, exported with the chat: the line names it, the lines after it are its caption
            name = next(g for g in attached.groups() if g is not None)
            current = (k + 1, when, names.setdefault(who, who), [], name, [line])
            continue
        if (said["text"] or "").startswith("\u200e"):
            # iOS gives its notices a sender (the group, or the other person) and marks every text it wrote itself,
            # in any language, with a leading U+200E: "Trip: \u200eAnn created group", "Bo: \u200eimage omitted",
            # "Bo: \u200eMissed voice call". Left out with the lines that continue it (a poll's options).
            continue
        # U+200E is the app's (a person does not type it); every other character of the text is the person's
        current = (k + 1, when, names.setdefault(who, who), [(said["text"] or "").replace("\u200e", "")], None,
                   [line])
    done = flush()
    if done is not None:
        found += 1
        yield done
    if not found:
        raise InvalidInput(f"{file}: no messages in this WhatsApp export")


# LINE's "Export chat history" (a .txt): a title "[LINE] Chat history with Ann" (Japanese "[LINE] Annとのトーク履歴",
# Chinese "[LINE] 與Ann的聊天記錄", ...), a "Saved on:" line, then a line per day ("2024/03/12(Tue)", "2024/03/12(火)",
# "2024/3/12周二", "2024.03.12 Tuesday", or English "Tue, 3/12/2024", month first: always with the day of the week,
# so a date alone on a line of a message is its text) and a line per message, the time
# of the phone's clock, the sender and the text apart by tabs ("09:05\tAnn\thello"; "下午09:05", "午後9:05",
# "9:05PM"); a message of several lines goes on in the lines after it, written inside quotation marks. The app's
# notices have no sender ("09:05\t\tAnn joined the group", or a time and the notice alone).
_LINE_TITLE = re.compile(r"^\ufeff?\[LINE\]\s")
_LINE_DAY = re.compile(r"^\ufeff?(?:(?P<y>\d{4})(?P<s>[/.])(?P<m>\d{1,2})(?P=s)(?P<d>\d{1,2})"
                       r"(?:\s*[（(][^)）\t]{1,12}[)）]|\s*(?:周|週|星期)\S{1,2}|,?\s+[A-Za-z]{2,12}\.?)"
                       r"|[A-Za-z]{2,12}\.?,\s*(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<Y>\d{4}))\s*$")
_LINE_MESSAGE = re.compile(r"^(?P<pb>上午|下午|午前|午後)?\s*(?P<h>\d{1,2}):(?P<min>\d{2})\s*(?P<pa>[AaPp][Mm])?"
                           r"\t(?:(?P<who>[^\t]*)\t)?(?P<text>.*)$")
_LINE_PM = {"下午", "午後", "pm"}
# a line that holds a date (a year of four digits) and little else: a day line when a message line follows it
_LINE_OTHER_DAY = re.compile(r"^[^\t\d]{0,24}(?:\d{4}[/.\-]\d{1,2}[/.\-]\d{1,2}|\d{1,2}[/.\-]\d{1,2}[/.\-]\d{4})"
                             r"[^\t\d]{0,24}$")
# What LINE writes in a message's place (English, Japanese, Chinese): media without words, an unsent message, a
# call; left out like WhatsApp's placeholders
_LINE_PLACEHOLDERS = re.compile(
    r"^(?:\[(?:photo|video|sticker|file|voice message|location|contact|album|notes?|gift|poll|"
    r"写真|動画|スタンプ|ファイル|ボイスメッセージ|位置情報|連絡先|アルバム|ノート|"
    r"照片|相片|影片|视频|貼圖|贴图|檔案|文件|語音訊息|语音信息|位置|聯絡資訊|联系人|相簿|相册|記事本|记事本)\]"
    r"|photos|videos|stickers|audio|message unsent\.?|.{0,80} unsent a message\.?|"
    r"メッセージの送信を取り消しました|.{0,80}がメッセージの送信を取り消しました|已收回訊息|.{0,80}已收回訊息|"
    r"撤回了一条消息|.{0,80}撤回了一条消息|☎.*)$", re.IGNORECASE | re.DOTALL)


def _line_export(first: str, second: str | None) -> bool:
    """Whether a file whose first two lines with text are these is a LINE export: LINE's title, or (an export
    without it) a day line and a message line under it."""
    return bool(_LINE_TITLE.match(first) or (_LINE_DAY.match(first) and second is not None
                                             and _LINE_MESSAGE.match(second)))


def _line_day(m: re.Match) -> tuple[int, int, int]:
    if m["y"] is not None:
        return int(m["y"]), int(m["m"]), int(m["d"])
    a, b = int(m["a"]), int(m["b"])
    return (int(m["Y"]), b, a) if a > 12 else (int(m["Y"]), a, b)  # month first, as LINE's English days are


def _read_line(file: str, text: str) -> Source:
    src = Source(file, "line", text)
    src.records.extend(_line_records(src, lambda: _iter_lines(text)))
    return src


def _line_records(src: Source, lines: Callable[[], Iterator[str]]) -> Iterator[Record]:
    """The messages of a LINE chat exported as text: one record per message, the lines after it that are neither a
    day nor a message joined to it; the app's notices (no sender), media placeholders, unsent messages and calls
    left out. The time is the phone's clock on the day of the day line above it, without a zone."""
    file = src.file
    day: tuple[int, int, int] | None = None
    day_line = ""
    current: tuple[int, datetime, str, list[str], list[str]] | None = None  # line, time, sender, text, as written
    found = 0

    def flush() -> Record | None:
        if current is None:
            return None
        lineno, when, who, body, raw = current
        while len(body) > 1 and not body[-1].strip():
            body.pop()
            raw.pop()
        if len(body) > 1 and body[0].startswith('"') and body[-1].rstrip().endswith('"'):
            # several lines, written inside quotation marks (a quotation mark of the text doubled)
            body = [body[0][1:], *body[1:-1], body[-1].rstrip()[:-1]]
            message = "\n".join(body).replace('""', '"').strip()
        else:
            message = "\n".join(body).strip()
        if not message or _LINE_PLACEHOLDERS.match(message):
            return None
        item = {"text": message, "speaker": who, "role": "user", "timestamp": when}
        return Record(item, (), lineno, digest=source_digest("line", "\n".join([day_line, *raw])))

    before = ""  # the line before, when neither a day nor a message
    for k, line in enumerate(lines()):
        d = _LINE_DAY.match(line)
        m = None if d is not None else _LINE_MESSAGE.match(line)
        if d is None and m is None:
            if current is not None:
                current[3].append(line)
                current[4].append(line)
            before = line
            continue
        if m is not None and _LINE_OTHER_DAY.match(before) and not before.rstrip().endswith('"'):
            # a date on a line of its own before a message, and no last line of a message in quotation marks: a day
            # line of a form not read here, which would leave the messages under it on the day before
            raise InvalidInput(f"{file}:{k}: a day line of a form hippo ingest does not read: {before.strip()!r} "
                               f"(LINE writes days as '2024/03/12(Tue)' or 'Tue, 3/12/2024')")
        before = ""
        done = flush()
        current = None
        if done is not None:
            found += 1
            yield done
        if d is not None:
            try:
                day = _line_day(d)
                datetime(*day)
            except ValueError:
                raise InvalidInput(f"{file}:{k + 1}: not a date: {line.strip()!r}") from None
            day_line = line.strip()
            continue
        if day is None:
            raise InvalidInput(f"{file}:{k + 1}: a message before the first day line (such as '2024/03/12(Tue)')")
        hour, period = int(m["h"]), (m["pb"] or m["pa"] or "").lower()
        if period:
            if not 0 <= hour <= 12:
                raise InvalidInput(f"{file}:{k + 1}: not a time: {line.split(chr(9))[0]!r}")
            hour = hour % 12 + (12 if period in _LINE_PM else 0)
        try:
            when = datetime(*day, hour, int(m["min"]))
        except ValueError:
            raise InvalidInput(f"{file}:{k + 1}: not a time: {line.split(chr(9))[0]!r}") from None
        who = (m["who"] or "").strip()
        if not who:  # the app's notice ("Ann joined the group", "Ann changed the group name")
            continue
        current = (k + 1, when, who, [m["text"]], [line])
    done = flush()
    if done is not None:
        found += 1
        yield done
    if not found:
        raise InvalidInput(f"{file}: no messages in this LINE export")


# A conversation that imessage-exporter (github.com/ReagentX/imessage-exporter) writes as text: a message is its time
# ("May 17, 2022  5:29:42 PM", the Mac's clock, then " (Read by you after 1 hour)" once read), a line with the
# sender ("Me" for the owner), its lines, and a blank line; a time with words after it on the same line is the
# app's notice ("... You renamed the conversation to Trip"). Inside a message: the files sent (their paths), a
# "Reactions:" block ("Loved by Ann", up to a blank line), the replies to it again (indented by four spaces; each is
# also a message of its own further on), "This message responded to an earlier message." and the effect it was
# sent with ("Sent with Confetti").
_IMESSAGE_TIME = re.compile(r"^\ufeff?(?P<mon>[A-Z][a-z]{2}) (?P<d>\d{1,2}), (?P<y>\d{4}) +(?P<h>\d{1,2}):"
                            r"(?P<min>\d{2}):(?P<s>\d{2}) (?P<p>[AP]M)(?P<rest>.*)$")
_IMESSAGE_READ = re.compile(r" \(Read by .{1,40} after [^)]*\)$")
_IMESSAGE_ATTACHMENT = re.compile(r"^(?:~|/)\S*/Library/(?:SMS|Messages)/Attachments/.+$")
_IMESSAGE_EFFECT = re.compile(r"^Sent with (?:Confetti|Echo|Fireworks|Balloons|Heart|Lasers|Shooting Start?|Sparkles|"
                              r"Spotlight|Slam|Loud|Gentle|Invisible Ink)$")
_IMESSAGE_NOTES = {"This message responded to an earlier message.", "Attachment missing!"}
_IMESSAGE_GONE = re.compile(r"^(?:You|They|.{1,60}) deleted a message\.$")


def _imessage_head(line: str) -> tuple[datetime, str] | None:
    """(the time, what follows it) of a line that opens an imessage-exporter message or notice; None otherwise."""
    m = _IMESSAGE_TIME.match(line)
    if m is None:
        return None
    rest = m["rest"]
    if rest and not _IMESSAGE_READ.fullmatch(rest) and not rest.startswith(" "):
        return None
    try:
        hour = int(m["h"])
        if not 1 <= hour <= 12:
            return None
        return _english_date(m["y"], m["mon"], m["d"], hour % 12 + (12 if m["p"] == "PM" else 0),
                             int(m["min"])).replace(second=int(m["s"])), rest
    except ValueError:
        return None


def _imessage_records(src: Source, lines: Callable[[], Iterator[str]]) -> Iterator[Record]:
    """The messages of a conversation imessage-exporter wrote as text: sender and time, the text less the files
    sent (their names in ``metadata["attachments"]``), the reactions, the replies written again inside the message
    they answer, the exporter's notes and the send effects; the app's notices and deleted messages left out. The
    time is the Mac's clock, without a zone."""
    file = src.file
    found = 0
    # line, time, sender (None until its line is read), text lines, files, the lines as written
    current: list[Any] | None = None
    blank = True  # the line before was blank (or there was none): a time line there opens a message
    skipping = ""  # "reactions" or "reply" while such a block of a message is read

    def flush() -> Record | None:
        if current is None or current[2] is None:
            return None
        lineno, when, who, body, files, raw = current
        while body and not body[-1].strip():
            body.pop()
        while len(raw) > 1 and not raw[-1].strip():
            raw.pop()
        message = "\n".join(body).strip()
        if (not message and not files) or _IMESSAGE_GONE.match(message):
            return None
        if not message:
            return None  # a file sent without words
        item: dict[str, Any] = {"text": message, "speaker": who, "role": "user", "timestamp": when}
        if files:
            item["metadata"] = {"attachments": files}
        raw[0] = _IMESSAGE_READ.sub("", raw[0])  # read later than exported: the same message
        return Record(item, (), lineno, digest=source_digest("imessage", "\n".join(raw)))

    for k, line in enumerate(lines()):
        head = _imessage_head(line) if blank else None
        blank = not line.strip()
        if head is not None:
            done = flush()
            if done is not None:
                found += 1
                yield done
            when, rest = head
            # a notice ("... You renamed the conversation to Trip") is one line and no message
            current = None if rest and not _IMESSAGE_READ.fullmatch(rest) else [k + 1, when, None, [], [], [line]]
            skipping = ""
            continue
        if current is None:
            continue
        current[5].append(line)
        if current[2] is None:
            current[2] = line.strip()
            continue
        if skipping == "reply" and line.startswith("    "):
            continue
        if skipping == "reactions" and line.strip():
            continue
        skipping = ""
        if line.startswith("    ") and _IMESSAGE_TIME.match(line[4:]):
            skipping = "reply"  # a reply, written again here: it is a message of its own further on
            continue
        if line == "Reactions:":
            skipping = "reactions"
            continue
        if _IMESSAGE_ATTACHMENT.match(line.strip()):
            current[4].append(posixpath.basename(line.strip()))
            continue
        if line.strip() in _IMESSAGE_NOTES or _IMESSAGE_EFFECT.match(line.strip()):
            continue
        current[3].append(line)
    done = flush()
    if done is not None:
        found += 1
        yield done
    if not found:
        raise InvalidInput(f"{file}: no messages in this imessage-exporter conversation")


def _telegram_text(value: Any, path: Path) -> str:
    """A Telegram message's text: a string, or a list of strings and entities ``{"type", "text"}``; a link under
    words of their own (``{"type": "text_link", "text": "here", "href": "https://..."}``) as ``here
    (https://...)``, as Slack's ``<https://...|here>`` is read."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for k, part in enumerate(value):
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                href = part.get("href")
                linked = part.get("type") == "text_link" and isinstance(href, str) and href.strip()
                parts.append(f"{part['text']} ({href})" if linked and href != part["text"] else part["text"])
            else:
                raise SourceError(path + ("text", k), "expected a string or an entity with 'text'", "text")
        return "".join(parts)
    raise SourceError(path, f"field 'text' must be a string or a list of entities, got {_kind(value)}", "text")


def _telegram_bot(chat: dict) -> str | None:
    """The account (``from_id``) of the bot a chat is with, when the chat is one (``"type": "bot_chat"``: its ``id``
    is the bot's), else None."""
    ident = chat.get("id")
    if chat.get("type") == "bot_chat" and isinstance(ident, (int, str)) and not isinstance(ident, bool):
        return f"user{ident}"
    return None


def telegram_records(msgs: list, base: Path = (), bot: str | None = None) -> Iterator[Record]:
    """A Telegram export's messages: ``type`` "message" with text, ``from`` as speaker, ``date`` as time; service
    messages and media without a caption left out. ``base`` is the path to the chat holding ``msgs``; ``bot`` the
    account of the bot the chat is with (:func:`_telegram_bot`), whose messages are marked ``bot``, as those a person
    sent through an inline bot (``via_bot``, its name kept) are."""
    for k, msg in enumerate(msgs):
        path = (*base, "messages", k)
        if not isinstance(msg, dict):
            raise SourceError(path, f"expected an object, got {_kind(msg)}")
        if msg.get("type", "message") != "message":
            continue
        body = _telegram_text(msg.get("text", ""), path).strip()
        poll = msg.get("poll")
        if not body and isinstance(poll, dict) and isinstance(poll.get("question"), str) and poll["question"].strip():
            # a poll's words are its question and its answers (WhatsApp's export writes them as the message's text)
            answers = poll.get("answers") if isinstance(poll.get("answers"), list) else []
            body = "\n".join([poll["question"].strip()] + [
                f"- {_telegram_text(a['text'], path).strip()}" for a in answers
                if isinstance(a, dict) and isinstance(a.get("text"), (str, list))])
        if not body:
            continue
        date = msg.get("date")
        try:
            when = parse_iso(date) if isinstance(date, str) else None
        except ValueError:
            when = None
        unix = msg.get("date_unixtime")  # the instant; "date" is the exporting machine's local time, no offset
        if isinstance(unix, str) and unix.isascii() and unix.isdigit():
            unix = int(unix)
        if when is not None and isinstance(unix, int) and not isinstance(unix, bool) and 0 <= unix < 2**37:
            when = datetime.fromtimestamp(unix, tz=timezone.utc)
        if when is None:
            raise SourceError(path, f"field 'date' must be an ISO-8601 date and time, got {date!r}", "date")
        # "from" is the name the sender had when the chat was exported, "from_id" the account ("user123"): a
        # deleted account has no name ("from": null) and only its id tells two of them apart, so it speaks as
        # Telegram shows it, "Deleted Account", with its id
        who = msg.get("from")
        sender = msg.get("from_id")
        sender = sender.strip() if isinstance(sender, str) and sender.strip() else None
        if not (isinstance(who, str) and who.strip()):
            who = f"Deleted Account {sender}" if sender is not None else None
        item: dict[str, Any] = {"text": body, "speaker": who, "role": "user", "timestamp": when}
        meta: dict[str, Any] = {}
        if isinstance(msg.get("id"), (int, str)):
            meta["telegram_id"] = msg["id"]
        if sender is not None:
            meta["from_id"] = sender
        # A forwarded message holds someone else's words ("from" is who forwarded it) and a reply answers one
        # message: both are what the export says about the text, kept beside it.
        forwarded = msg.get("forwarded_from")
        if isinstance(forwarded, str) and forwarded.strip():
            meta["forwarded_from"] = forwarded
        reply = msg.get("reply_to_message_id")
        if isinstance(reply, (int, str)) and not isinstance(reply, bool):
            meta["reply_to"] = reply
        if msg.get("edited"):
            meta["edited"] = True
        # a bot's words: the bot's own in a chat with it, or an inline bot's result a person sent (``"via_bot":
        # "@gif"``); Telegram's export says no more of a group's bots
        via = msg.get("via_bot")
        if isinstance(via, str) and via.strip():
            meta["via_bot"] = via.strip()
        if (bot is not None and sender == bot) or "via_bot" in meta:
            meta["bot"] = True
        if meta:
            item["metadata"] = meta
        # the message, less what changes after it was sent: its reactions, and the sender's name where the account
        # id names the sender (a rename, a deleted account)
        raw = _picked(msg, ("id", "type", "date", "date_unixtime", "from_id", "text", "poll", "edited",
                            "edited_unixtime", "forwarded_from", "reply_to_message_id"))
        if sender is None:
            raw["from"] = msg.get("from")
        # an id is a chat's own (another chat has a message 11 too): with its sender and the instant it was sent
        ident = None
        if isinstance(msg.get("id"), (int, str)) and not isinstance(msg.get("id"), bool):
            ident = source_id("telegram", {"id": msg["id"], "sent": msg.get("date_unixtime", msg.get("date")),
                                           "from": sender if sender is not None else msg.get("from")})
        yield Record(item, path, digest=source_digest("telegram", raw), ident=ident)


def telegram_export_records(doc: dict) -> list[Record]:
    """The chats of a Telegram account's export (``{"chats": {"list": [chat, ...]}, "left_chats": {"list": [...]}}``,
    each chat ``{"name", "type", "id", "messages"}``): every chat's messages as :func:`telegram_records` reads
    them, in one time line, each with its chat's name in ``metadata["chat"]`` and as its group (``--split``: a
    namespace per chat; two chats of one name are told apart by their ids)."""
    chats: list[tuple[Path, dict]] = []
    for part in ("chats", "left_chats"):
        holder = doc.get(part)
        if holder is None and part == "left_chats":
            continue
        if not isinstance(holder, dict) or not isinstance(holder.get("list"), list):
            raise SourceError((), f"field {part!r} must be an object whose 'list' is a list of chats", part)
        for c, chat in enumerate(holder["list"]):
            path = (part, "list", c)
            if not isinstance(chat, dict):
                raise SourceError(path, f"expected a chat object, got {_kind(chat)}")
            if not isinstance(chat.get("messages"), list):
                raise SourceError(path, f"field 'messages' must be a list, got {_kind(chat.get('messages'))}",
                                  "messages")
            chats.append((path, chat))

    def name_of(chat: dict) -> str:
        name = chat.get("name")
        if isinstance(name, str) and name.strip():
            return name.strip()
        kind = chat.get("type")
        return "Saved Messages" if kind == "saved_messages" else f"chat {chat.get('id')}"

    names = [name_of(chat) for _, chat in chats]
    out: list[tuple[datetime, int, Record]] = []
    for (path, chat), name in zip(chats, names):
        group = name if names.count(name) == 1 else f"{name} ({chat.get('id')})"
        for rec in telegram_records(chat["messages"], path, _telegram_bot(chat)):
            rec.item.setdefault("metadata", {})["chat"] = group
            rec.group = group
            when = rec.item["timestamp"]
            out.append((when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc), len(out), rec))
    # one time line across the chats; a chat's own messages keep their order
    out.sort(key=lambda t: (t[0], t[1]))
    return [rec for _, _, rec in out]


# Facebook Messenger and Instagram write every string of their JSON as UTF-8 bytes escaped one by one as if they were
# Latin-1 characters: "é" (bytes C3 A9) is written "\u00c3\u00a9", which JSON reads as "Ã©". A file of such strings
# holds no character above U+00FF; the same file written properly does as soon as it holds a letter outside Latin-1.
# What the app writes in a message's place, in the export's (English) words: left out like WhatsApp's placeholders.
# The sender is named ("Bo sent an attachment."), is "You", or goes unsaid (Instagram's "Liked a message",
# "Reacted 😂 to your message").
_MESSENGER_NOTICES = re.compile(
    r"^(?:(?:you|(?P<who>.+?)) )?(?:sent (?:an attachment|a (?:photo|video|link|gif|sticker|voice message|file)|"
    r"\d+ (?:photos|videos))|unsent a message|reacted .{1,12} to (?:your|a) message|liked a message|"
    r"(?:missed|started) an? (?:audio|video) call|called you|"
    # a group's and a chat's settings, which the export writes as a message of the person who changed them
    r"named the group .+|removed the group name|changed the group photo|changed the theme to .+|"
    r"set the nickname for .+ to .+|set (?:your|his|her|their) own nickname to .+|set your nickname to .+|"
    r"cleared (?:the|your|his|her|their own) nickname(?: for .+)?|(?:set|changed) the (?:quick reaction|emoji) "
    r"to .+|added .+ to the group|removed .+ from the group|left the group|pinned a message)\.?$",
    re.IGNORECASE | re.DOTALL)
# The kinds of message that are the app's record of an event, not something a person wrote
_MESSENGER_EVENTS = {"Call", "Subscribe", "Unsubscribe", "Payment"}
_MESSENGER_MEDIA = ("photos", "videos", "gifs", "audio_files", "files")


def _all_latin1(value: Any) -> bool:
    """True when no string in ``value`` (keys included) holds a character above U+00FF."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if v and max(v) > "\u00ff":
                return False
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return True


def _reactions(msg: dict[str, Any], path: Path, key: str, entry: Callable[[dict[str, Any]], dict[str, Any]],
               inner: str | None = None) -> list[dict[str, Any]]:
    """A message's ``reactions`` list, each as ``entry`` makes it of a reaction object with a string ``key`` (with
    ``inner``: an object under ``key`` with a string ``inner``, as Discord's ``{"emoji": {"name": ...}}``); a
    SourceError naming the place for anything else."""
    reactions = msg.get("reactions")
    if reactions is None:
        return []
    if not isinstance(reactions, list):
        raise SourceError(path, f"field 'reactions' must be a list, got {_kind(reactions)}", "reactions")
    got = []
    for r, reaction in enumerate(reactions):
        name = reaction.get(key) if isinstance(reaction, dict) else None
        if inner is not None:
            name = name.get(inner) if isinstance(name, dict) else None
        if not isinstance(name, str):
            raise SourceError(path + ("reactions", r), f"expected a reaction with a '{key}' string" if inner is None
                              else f"expected a reaction with an '{key}' that has a '{inner}'", key)
        got.append(entry(reaction))
    return got


def _counted(entry: dict[str, Any], reaction: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with the reaction's ``count`` (how many people reacted so), where the export gives one."""
    count = reaction.get("count")
    if isinstance(count, int) and not isinstance(count, bool):
        entry["count"] = count
    return entry


def _facebook_text(value: str, escaped: bool) -> str:
    """A string of a Messenger or Instagram export as the person wrote it: its UTF-8 bytes read back from the
    Latin-1 escapes, when the file is written so (``escaped``); a string those bytes are not UTF-8 of is kept."""
    if not escaped or value.isascii():
        return value
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def _millis(value: Any, path: Path, key: str) -> datetime:
    if isinstance(value, str) and value.isascii() and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 2**47:
        raise SourceError(path, f"field {key!r} must be a time in milliseconds since 1970, got {value!r}", key)
    return datetime.fromtimestamp(value / 1000, tz=timezone.utc)


# The fields of a thread in "Download your information" (message_<n>.json) and in the download of the end-to-end
# encrypted chats (<Name>_<n>.json, 2024): sender, time in milliseconds, text, unsent, the lists of media
_MESSENGER_FIELDS = ("sender_name", "timestamp_ms", "content", "is_unsent", _MESSENGER_MEDIA)
_MESSENGER_E2EE_FIELDS = ("senderName", "timestamp", "text", "isUnsent", ("media",))


def messenger_records(doc: dict, encrypted: bool = False) -> list[Record]:
    """A Facebook Messenger or Instagram thread (``message_<n>.json``): messages with ``content``, sender as
    speaker, ``timestamp_ms`` as time, put in time order (the file lists the newest first); the text repaired from
    the Latin-1 escapes the export writes. Calls, joins and leaves, unsent messages and the app's notices in a
    message's place ("Bo sent an attachment.") are left out, and so are photos, videos, stickers and shares without
    words; the media of a message with words are named in ``metadata["attachments"]``, a shared link in
    ``metadata["link"]``, reactions in ``metadata["reactions"]``. ``encrypted``: a thread of Messenger's download
    of its end-to-end encrypted chats (``{"participants": [names], "threadName", "messages": [{"senderName",
    "timestamp", "text", "type", "isUnsent", "media": [{"uri"}], "reactions": [{"actor", "reaction"}]}]}``), read
    alike; its ``placeholder`` messages (what the app could not export) are left out, and media it failed to
    download (a ``uri`` that is no file's path) are not named."""
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise SourceError((), "expected a thread object whose 'messages' is a list", "messages")
    sender_key, time_key, text_key, unsent_key, media_keys = _MESSENGER_E2EE_FIELDS if encrypted else _MESSENGER_FIELDS
    escaped = _all_latin1(doc)
    out: list[tuple[datetime, int, Record]] = []
    for k, msg in enumerate(doc["messages"]):
        path = ("messages", k)
        if not isinstance(msg, dict):
            raise SourceError(path, f"expected an object, got {_kind(msg)}")
        when = _millis(msg.get(time_key), path, time_key)
        who = msg.get(sender_key)
        if who is not None and not isinstance(who, str):
            raise SourceError(path, f"field {sender_key!r} must be a string, got {_kind(who)}", sender_key)
        who = _facebook_text(who, escaped).strip() if who else None
        content = _optional_text(msg, text_key, path)
        body = _facebook_text(content, escaped).strip()
        meta: dict[str, Any] = {}
        names = []
        for key in media_keys:
            media = msg.get(key)
            if media is None:
                continue
            if not isinstance(media, list):
                raise SourceError(path, f"field {key!r} must be a list, got {_kind(media)}", key)
            for m, item in enumerate(media):
                uri = item.get("uri") if isinstance(item, dict) else None
                if not isinstance(uri, str):
                    raise SourceError(path + (key, m), "expected a media object with a 'uri'", "uri")
                if encrypted and "/" not in uri:
                    continue  # "Failed to download media": no file
                names.append(posixpath.basename(_facebook_text(uri, escaped)))
        if names:
            meta["attachments"] = names
        share = msg.get("share")
        if isinstance(share, dict) and isinstance(share.get("link"), str) and share["link"].strip():
            meta["link"] = _facebook_text(share["link"], escaped)
        def facebook_reaction(reaction: dict[str, Any]) -> dict[str, Any]:
            entry = {"reaction": _facebook_text(reaction["reaction"], escaped)}
            if isinstance(reaction.get("actor"), str):
                entry["actor"] = _facebook_text(reaction["actor"], escaped)
            return entry

        got = _reactions(msg, path, "reaction", facebook_reaction)
        if got:
            meta["reactions"] = got
        # every message is checked whole, then the ones nobody wrote are left out
        kind = msg.get("type")
        if kind is not None and not isinstance(kind, str):
            raise SourceError(path, f"field 'type' must be a string, got {_kind(kind)}", "type")
        if not body or msg.get(unsent_key) or kind in _MESSENGER_EVENTS or "call_duration" in msg:
            continue
        if encrypted and kind == "placeholder":
            continue
        notice = _MESSENGER_NOTICES.match(body)
        if notice is not None and (notice["who"] is None or notice["who"] == who):
            continue
        item: dict[str, Any] = {"text": body, "speaker": who or None, "role": "user", "timestamp": when}
        if meta:
            item["metadata"] = meta
        # the strings as the file writes them (escaped or not), not as they are read
        raw = _picked(msg, (sender_key, time_key, text_key))
        # no id: the millisecond and the words name a message, whatever its sender is called since (Facebook's
        # names change, and an export names every message's sender as it is called when exported)
        ident = source_id("messenger", _picked(msg, (time_key, text_key)))
        out.append((when, -k, Record(item, path, digest=source_digest("messenger", raw), ident=ident)))
    # the file lists the newest message first; messages of the same millisecond keep their order, read backwards
    out.sort(key=lambda t: (t[0], t[1]))
    return [rec for _, _, rec in out]


# DiscordChatExporter writes a message's kind by its name, or by its number when it has no name for it; kinds 1 to
# 18 are Discord's system notices ("Started a call.", "Pinned a message.", "joined the server", boosts), as
# DiscordChatExporter's own MessageKindExtensions.IsSystemNotification has it. Default (0), Reply (19) and the
# replies to commands (20, 23) are what people and bots said.
_DISCORD_NOTICES = {"RecipientAdd", "RecipientRemove", "Call", "ChannelNameChange", "ChannelIconChange",
                    "ChannelPinnedMessage", "GuildMemberJoin", "ThreadCreated", "UserPremiumGuildSubscription",
                    "UserPremiumGuildSubscriptionTier1", "UserPremiumGuildSubscriptionTier2",
                    "UserPremiumGuildSubscriptionTier3", "ChannelFollowAdd", "GuildDiscoveryDisqualified",
                    "GuildDiscoveryRequalified", "GuildDiscoveryGracePeriodInitialWarning",
                    "GuildDiscoveryGracePeriodFinalWarning"}


def _discord_notice(kind: str | int | None) -> bool:
    if isinstance(kind, int):
        return 1 <= kind <= 18
    if isinstance(kind, str) and kind.isascii() and kind.isdigit():
        return 1 <= int(kind) <= 18
    return kind in _DISCORD_NOTICES


def _iso_time(value: Any, path: Path, key: str) -> datetime:
    if isinstance(value, str):
        try:
            return parse_iso(value.strip())
        except ValueError:
            pass
    raise SourceError(path, f"field {key!r} must be an ISO-8601 date and time, got {value!r}", key)


def _names(items: Any, path: Path, key: str, name: str, *alternatives: str) -> list[str]:
    """The names of a message's attachments, stickers or embeds (``name``, else the first alternative present)."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise SourceError(path, f"field {key!r} must be a list, got {_kind(items)}", key)
    out = []
    for k, item in enumerate(items):
        if not isinstance(item, dict):
            raise SourceError(path + (key, k), f"expected an object, got {_kind(item)}")
        got = next((item[f] for f in (name, *alternatives) if isinstance(item.get(f), str) and item[f].strip()),
                   None)
        if got is not None:
            out.append(got)
    return out


def discord_records(msgs: list) -> list[Record]:
    """A Discord channel as DiscordChatExporter writes it in JSON: messages with ``content``, the author's
    ``nickname`` (the name the server shows, else ``name``) as speaker, ``timestamp`` as time, in time order.
    System notices (joins, pins, calls, boosts) and messages without words (an attachment, a sticker or an embed
    alone) are left out. Metadata: ``discord_id``, ``reply_to`` (the id of the message answered), ``edited``,
    ``pinned``, ``bot``, and the names of ``attachments``, ``stickers`` and ``embeds`` (title or link), and
    ``reactions`` as ``[{"emoji", "count"}]``."""
    if not isinstance(msgs, list):
        raise SourceError(("messages",), f"expected a list of messages, got {_kind(msgs)}")
    out: list[tuple[datetime, int, Record]] = []
    for k, msg in enumerate(msgs):
        path = ("messages", k)
        if not isinstance(msg, dict):
            raise SourceError(path, f"expected an object, got {_kind(msg)}")
        when = _iso_time(msg.get("timestamp"), path, "timestamp")
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        author = msg.get("author")
        if not isinstance(author, dict):  # every Discord message names its author
            raise SourceError(path, f"field 'author' must be an object, got {_kind(author)}", "author")
        who = _person(msg, "author", ("nickname", "name"), path)
        content = _optional_text(msg, "content", path)
        meta: dict[str, Any] = {}
        if isinstance(msg.get("id"), (str, int)) and not isinstance(msg.get("id"), bool):
            meta["discord_id"] = msg["id"]
        reference = msg.get("reference")
        if reference is not None:
            if not isinstance(reference, dict):
                raise SourceError(path, f"field 'reference' must be an object, got {_kind(reference)}", "reference")
            if isinstance(reference.get("messageId"), (str, int)) and not isinstance(reference["messageId"], bool):
                meta["reply_to"] = reference["messageId"]
        if msg.get("timestampEdited") is not None:
            _iso_time(msg["timestampEdited"], path, "timestampEdited")
            meta["edited"] = True
        if msg.get("isPinned") is True:
            meta["pinned"] = True
        if author.get("isBot") is True:
            meta["bot"] = True
        for key, name, alternatives in (("attachments", "fileName", ("url",)), ("stickers", "name", ()),
                                        ("embeds", "title", ("url",))):
            names = _names(msg.get(key), path, key, name, *alternatives)
            if names:
                meta[key] = names
        got = _reactions(msg, path, "emoji", lambda r: _counted({"emoji": r["emoji"]["name"]}, r), "name")
        if got:
            meta["reactions"] = got
        # every message is checked whole, then the notices and the messages without words are left out
        kind = msg.get("type")
        if kind is not None and (isinstance(kind, bool) or not isinstance(kind, (str, int))):
            raise SourceError(path, f"field 'type' must be the message's kind, a name or a number, got {_kind(kind)}",
                              "type")
        if _discord_notice(kind) or not content.strip():
            continue
        item: dict[str, Any] = {"text": content.strip(), "speaker": who, "role": "user", "timestamp": when}
        if meta:
            item["metadata"] = meta
        # the message's id and words; not its author's names, roles and picture, its reactions, nor the addresses
        # of its files, which Discord signs anew for each export
        raw = _picked(msg, ("id", "type", "timestamp", "timestampEdited", "content"))
        raw["author"] = author.get("id", _picked(author, ("name", "nickname")))
        ident = source_id("discord", {"id": msg["id"]}) if "discord_id" in meta else None  # Discord's ids are unique
        out.append((when, k, Record(item, path, digest=source_digest("discord", raw), ident=ident)))
    # DiscordChatExporter writes the oldest first unless asked otherwise; either way the times put them in order
    out.sort(key=lambda t: (t[0], t[1]))
    return [rec for _, _, rec in out]


# Google Chat's time in Google Takeout, in English: "Tuesday, March 12, 2024 at 9:05:33 AM UTC" (since 2023 with a
# narrow no-break space before the AM or PM), or as an English account in Britain reads it, "Tuesday, 12 March 2024 at
# 09:05:33 UTC"; the zone UTC (or GMT), possibly with an offset ("GMT+2", "UTC-04:00")
_GOOGLE_CHAT_DATE = re.compile(
    r"(?:[A-Za-z]+,\s*)?(?:(?P<month>[A-Za-z]+)\s+(?P<day>\d{1,2})|(?P<day2>\d{1,2})\s+(?P<month2>[A-Za-z]+)),?\s*"
    r"(?P<year>\d{4}),?\s+(?:at\s+)?(?P<h>\d{1,2}):(?P<min>\d{2})(?::(?P<s>\d{2}))?"
    r"(?:[\s\u202f\u00a0]*(?P<p>[AaPp][Mm]))?\s*(?:UTC|GMT)(?:(?P<sign>[+-])(?P<oh>\d{1,2})(?::?(?P<om>\d{2}))?)?")


def _google_chat_time(value: Any, path: Path) -> datetime:
    m = _GOOGLE_CHAT_DATE.fullmatch(value.strip()) if isinstance(value, str) else None
    if m is not None:
        hour = int(m["h"])
        if (1 <= hour <= 12) if m["p"] else hour <= 23:
            if m["p"]:
                hour = hour % 12 + (12 if m["p"].lower() == "pm" else 0)
            offset = 0 if m["sign"] is None else (1 if m["sign"] == "+" else -1) * (
                int(m["oh"]) * 60 + int(m["om"] or 0))
            try:
                day = _english_date(m["year"], m["month"] or m["month2"], m["day"] or m["day2"])
                return day.replace(hour=hour, minute=int(m["min"]), second=int(m["s"] or 0),
                                   tzinfo=timezone(timedelta(minutes=offset)))
            except ValueError:
                pass
    raise SourceError(path, f"field 'created_date' must be a time as Google Takeout writes it, like 'Tuesday, March "
                            f"12, 2024 at 9:05:33 AM UTC', got {value!r}", "created_date")


def google_chat_records(msgs: list) -> list[Record]:
    """A Google Chat conversation from Google Takeout (``Google Chat/Groups/<DM or Space ...>/messages.json``:
    ``{"messages": [{"creator": {"name", "email", "user_type"}, "created_date", "text", "topic_id", "message_id",
    "attached_files"?, "reactions"?}]}``): messages with text, the creator's name (else email) as speaker,
    ``created_date`` as time, in time order; deleted messages and files without words left out. Metadata:
    ``google_chat_id`` (``message_id``), ``topic_id`` (the thread), ``bot`` for a bot's message, the names of
    ``attachments``, ``reactions`` as ``[{"emoji", "count"}]``."""
    out: list[tuple[datetime, int, Record]] = []
    for k, msg in enumerate(msgs):
        path = ("messages", k)
        if not isinstance(msg, dict):
            raise SourceError(path, f"expected an object, got {_kind(msg)}")
        when = _google_chat_time(msg.get("created_date"), path)
        who = _person(msg, "creator", ("name", "email"), path)
        creator = msg.get("creator") or {}
        text = _optional_text(msg, "text", path)
        meta: dict[str, Any] = {}
        for key, name in (("message_id", "google_chat_id"), ("topic_id", "topic_id")):
            if isinstance(msg.get(key), str) and msg[key].strip():
                meta[name] = msg[key]
        if isinstance(creator.get("user_type"), str) and creator["user_type"] not in ("Human", ""):
            meta["bot"] = True
        attached = _names(msg.get("attached_files"), path, "attached_files", "original_name", "export_name")
        if attached:
            meta["attachments"] = attached

        reactions = msg.get("reactions")
        if reactions is not None and not isinstance(reactions, list):
            raise SourceError(path, f"field 'reactions' must be a list, got {_kind(reactions)}", "reactions")
        got = []
        for reaction in reactions or []:
            # {"emoji": {"unicode": "👍"}, "reactor_emails": [...]}; a workspace's own emoji is
            # {"custom_emoji": {"name": ":party:", ...}}, named by its name
            emoji = reaction.get("emoji") if isinstance(reaction, dict) else None
            custom = emoji.get("custom_emoji") if isinstance(emoji, dict) else None
            name = emoji.get("unicode") if isinstance(emoji, dict) else None
            name = name if isinstance(name, str) else custom.get("name") if isinstance(custom, dict) else None
            if not isinstance(name, str) or not name.strip():
                continue
            entry: dict[str, Any] = {"emoji": name}
            if isinstance(reaction.get("reactor_emails"), list):
                entry["count"] = len(reaction["reactor_emails"])
            got.append(entry)
        if got:
            meta["reactions"] = got
        if msg.get("message_state") == "DELETED" or not text.strip():
            continue
        item: dict[str, Any] = {"text": text.strip(), "speaker": who, "role": "user", "timestamp": when}
        if meta:
            item["metadata"] = meta
        raw = _picked(msg, ("message_id", "created_date", "text"))
        raw["creator"] = creator.get("email", creator.get("name"))
        ident = source_id("google-chat", {"message_id": msg["message_id"]}) if "google_chat_id" in meta else None
        out.append((when, k, Record(item, path, digest=source_digest("google-chat", raw), ident=ident)))
    out.sort(key=lambda t: (t[0], t[1]))
    return [rec for _, _, rec in out]


# Slack subtypes of what someone said; every other one (channel_join, channel_topic, pinned_item, tombstone, ...) is
# the app's record of an event, left out
_SLACK_SAID = {None, "thread_broadcast", "file_share", "me_message", "bot_message"}
# Slack's markup in a message's text: <@U123> or <@U123|ann> a person, <#C123|general> a channel, <!here> a
# broadcast, <!subteam^S123|@team> a group, <!date^...|fallback> a date, <https://...|label> or <https://...> a link;
# and "&", "<", ">" escaped as &amp; &lt; &gt; (https://api.slack.com/reference/surfaces/formatting)
_SLACK_MARKUP = re.compile(r"<([^<>|]*)(?:\|([^<>]*))?>")


def _slack_text(text: str, users: dict[str, str], channels: dict[str, str]) -> str:
    """A Slack message's text as people read it: mentions by name, links with their label, &amp; &lt; &gt; undone."""

    def plain(m: re.Match) -> str:
        target, label = m[1], m[2]
        if target.startswith("@"):
            return "@" + (label or users.get(target[1:], target[1:]))
        if target.startswith("#"):
            return "#" + (label or channels.get(target[1:], target[1:]))
        if target.startswith("!"):
            if label:
                return label
            word = target[1:].split("^")[0]
            return "@" + word if word in ("here", "channel", "everyone") else m[0]
        if not label or target.split(":", 1)[-1].lstrip("/") == label:
            return label or target  # <https://x.org|x.org> and <mailto:a@b.org|a@b.org> read as the label
        return f"{label} ({target})"

    text = _SLACK_MARKUP.sub(plain, text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _slack_attachments_text(attachments: Any, path: Path) -> str:
    """The words of a message's legacy ``attachments`` (what integrations post): each one's ``fallback``, the plain
    text summary Slack asks of them, else its ``pretext``, ``title`` and ``text``; one a line."""
    if attachments is None:
        return ""
    if not isinstance(attachments, list):
        raise SourceError(path, f"field 'attachments' must be a list, got {_kind(attachments)}", "attachments")
    out = []
    for a, attachment in enumerate(attachments):
        if not isinstance(attachment, dict):
            raise SourceError(path + ("attachments", a), f"expected an object, got {_kind(attachment)}")
        fallback = attachment.get("fallback")
        parts = [fallback] if isinstance(fallback, str) and fallback.strip() else [
            attachment.get(key) for key in ("pretext", "title", "text")]
        out.extend(part.strip() for part in parts if isinstance(part, str) and part.strip())
    return "\n".join(out)


def _slack_ts(value: Any, path: Path, key: str = "ts") -> datetime:
    """Slack's ``ts``, "1355517523.000005": seconds since 1970 and six digits that make it unique."""
    if isinstance(value, str):
        m = re.fullmatch(r"(\d{1,11})(?:\.(\d{1,6}))?", value.strip())
        if m is not None:
            return datetime.fromtimestamp(int(m[1]), tz=timezone.utc) + timedelta(
                microseconds=int((m[2] or "0").ljust(6, "0")))
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 2**37:
        return datetime.fromtimestamp(value, tz=timezone.utc)
    raise SourceError(path, f"field {key!r} must be a Slack timestamp like '1355517523.000005', got {value!r}", key)


def _slack_name(profile: Any) -> str | None:
    """The name Slack shows for a profile: its display name, else its real name (else its user name)."""
    if not isinstance(profile, dict):
        return None
    inner = profile.get("profile") if isinstance(profile.get("profile"), dict) else {}
    for source, key in ((profile, "display_name"), (inner, "display_name"), (profile, "real_name"),
                        (inner, "real_name"), (profile, "name")):
        if isinstance(source.get(key), str) and source[key].strip():
            return source[key].strip()
    return None


def slack_records(msgs: list, users: dict[str, str] | None = None, channels: dict[str, str] | None = None,
                  channel: str | None = None, bots: set[str] | frozenset[str] = frozenset()) -> list[Record]:
    """A day of a Slack channel (a workspace export's ``<channel>/<YYYY-MM-DD>.json``): messages with text, the
    name Slack shows for the sender as speaker (``user_profile``, else the export's ``users.json`` in ``users``, a
    bot's ``username``, else the user id), ``ts`` as time, in time order; joins, leaves, topic changes and the other
    subtypes of events left out, and files without words; a message without text has the words of its legacy
    ``attachments`` (an integration's), each one's ``fallback``. Metadata: ``slack_ts`` (the message's id),
    ``thread_ts`` (the thread a reply is in), ``edited``, ``bot``, the names of ``attachments`` (files),
    ``reactions`` as ``[{"emoji", "count"}]``, and ``channel`` when read from an export archive. A message is a
    bot's (``bot``) when its subtype is ``bot_message``, it names a bot and no user (``bot_id``), it carries the
    profile of the bot that posted it (``bot_profile``, an app's message posted as its bot user), or its user is
    one of ``bots`` (the export's ``users.json`` says ``is_bot``)."""
    if not isinstance(msgs, list):
        raise SourceError((), f"expected a list of messages (a day of a Slack channel), got {_kind(msgs)}")
    for arg, value in (("users", users), ("channels", channels)):
        if value is not None and not (isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str)
                                                                      for k, v in value.items())):
            raise InvalidInput(f"{arg} must be a dict of ids to names, got {type(value).__name__}")
    if channel is not None and (not isinstance(channel, str) or not channel.strip()):
        raise InvalidInput(f"channel must be a non-empty str or None, got {channel!r}")
    names = dict(users or {})
    for msg in msgs:  # the file's own profiles name the people its mentions name
        if isinstance(msg, dict) and isinstance(msg.get("user"), str):
            name = _slack_name(msg.get("user_profile"))
            if name is not None:
                names.setdefault(msg["user"], name)
    out: list[tuple[datetime, int, Record]] = []
    for k, msg in enumerate(msgs):
        path = (k,)
        if not isinstance(msg, dict):
            raise SourceError(path, f"expected an object, got {_kind(msg)}")
        when = _slack_ts(msg.get("ts"), path)
        text = _optional_text(msg, "text", path)
        subtype = msg.get("subtype")
        if subtype is not None and not isinstance(subtype, str):
            raise SourceError(path, f"field 'subtype' must be a string, got {_kind(subtype)}", "subtype")
        user = msg.get("user")
        if user is not None and not isinstance(user, str):
            raise SourceError(path, f"field 'user' must be a user id, got {_kind(user)}", "user")
        username = msg.get("username")  # a bot's or an integration's name
        who = (_slack_name(msg.get("user_profile")) or (names.get(user) if user else None)
               or (username.strip() if isinstance(username, str) and username.strip() else None)
               or _slack_name(msg.get("bot_profile")) or user)
        meta: dict[str, Any] = {"slack_ts": msg["ts"] if isinstance(msg["ts"], str) else str(msg["ts"])}
        thread = msg.get("thread_ts")
        if thread is not None:
            _slack_ts(thread, path, "thread_ts")
            if str(thread) != meta["slack_ts"]:
                meta["thread_ts"] = str(thread)
        if isinstance(msg.get("edited"), dict):
            meta["edited"] = True
        if subtype == "bot_message" or "bot_id" in msg and user is None or isinstance(msg.get("bot_profile"), dict) \
                or user in bots:
            meta["bot"] = True
        files = msg.get("files", [msg["file"]] if isinstance(msg.get("file"), dict) else None)
        attached = _names(files, path, "files", "name", "title")
        if attached:
            meta["attachments"] = attached
        got = _reactions(msg, path, "name", lambda r: _counted({"emoji": r["name"]}, r))
        if got:
            meta["reactions"] = got
        if channel is not None:
            meta["channel"] = channel
        # every message is checked whole, then the app's events and the messages without words are left out
        if msg.get("type", "message") != "message" or subtype not in _SLACK_SAID:
            continue
        body = _slack_text(text, names, channels or {}).strip()
        if not body:
            # an integration's message (a bot posting a pull request, an alert, a ticket) has its words in
            # "attachments", each with the plain text summary Slack asks of them ("fallback"), and no text
            body = _slack_text(_slack_attachments_text(msg.get("attachments"), path), names, channels or {}).strip()
        if not body:
            continue
        item: dict[str, Any] = {"text": body, "speaker": who, "role": "user", "timestamp": when, "metadata": meta}
        # the message's ts (its id in the channel), sender and words; not the profile (a later name), reactions,
        # reply counts of a thread, nor the addresses of files (the export writes them with a token of its own)
        raw = _picked(msg, ("type", "subtype", "ts", "user", "bot_id", "username", "text", "thread_ts", "edited"))
        if not text.strip():
            raw["attachments"] = _slack_attachments_text(msg.get("attachments"), path)
        # a ts is unique within a channel; with its sender, a day file read alone (no channel known) names it too
        ident = source_id("slack", _picked(msg, ("ts", "user", "bot_id", "username")))
        out.append((when, k, Record(item, path, digest=source_digest("slack", raw), ident=ident)))
    out.sort(key=lambda t: (t[0], t[1]))
    return [rec for _, _, rec in out]



# A Slack workspace export: users.json, channels.json (groups.json, dms.json, mpims.json for the private ones) and a
# folder per conversation holding a file per day, <folder>/<YYYY-MM-DD>.json; possibly all inside one folder.
_SLACK_DAY = re.compile(r"^(?P<root>(?:[^/]+/)?)(?P<channel>[^/]+)/\d{4}-\d{2}-\d{2}\.json$")
_SLACK_LISTS = ("users.json", "org_users.json", "channels.json", "groups.json", "dms.json", "mpims.json")


def _read_slack_archive(file: str, data: bytes, encoding: str) -> Source | None:
    """A Slack workspace export as Slack hands it over (a zip): every day of every conversation, in time order,
    each message's ``metadata["channel"]`` its folder's name and its group that channel (``--split``: a namespace
    per channel); mentions named from ``users.json`` and ``channels.json``. None for a zip that is no such export."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = [info.filename for info in archive.infolist() if not info.is_dir()
                     and not info.filename.startswith("__MACOSX/")
                     and not posixpath.basename(info.filename).startswith(".")]
            lists = {posixpath.basename(n): n for n in names if posixpath.basename(n) in _SLACK_LISTS
                     and n.count("/") <= 1}
            days = [(m["root"], m["channel"], n) for n, m in ((n, _SLACK_DAY.match(n)) for n in names) if m]
            if not lists or not days:
                return None
            root = posixpath.dirname(next(iter(lists.values())))
            root = root + "/" if root else ""
            days = sorted((channel, name) for r, channel, name in days if r == root)
            if not days:
                return None

            declared = sum(archive.getinfo(n).file_size for n in [*lists.values(), *(n for _, n in days)])
            if declared > MAX_UNZIPPED:
                raise InvalidInput(f"{file}: its Slack files unpack to {_size(declared, MAX_UNZIPPED)} (as the "
                                   f"archive declares), more than the {_size(MAX_UNZIPPED, declared)} hippo ingest unpacks from a zip archive; "
                                   f"ingest its day files one at a time, the oldest first")
            room = [MAX_UNZIPPED]  # what the export's files may still unpack to, all of them together

            def load(name: str) -> tuple[Source, Any]:
                shown = f"{file} ({name})"
                data = _unpacked(file, archive, archive.getinfo(name), room[0])
                room[0] -= len(data)
                text = _decode(shown, data, encoding)
                return Source(shown, "slack", text), _load_document(shown, text)

            users: dict[str, str] = {}
            bots: set[str] = set()
            channels: dict[str, str] = {}
            for base, name in lists.items():
                src, doc = load(name)
                if not isinstance(doc, list):
                    raise src.error((), f"expected a list of {base[:-5]}, got {_kind(doc)}")
                for k, entry in enumerate(doc):
                    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                        raise src.error((k,), "expected an object with an 'id'", "id")
                    if base.endswith("users.json"):
                        shown = _slack_name(entry)
                        if shown is not None:
                            users[entry["id"]] = shown
                        if entry.get("is_bot") is True:
                            bots.add(entry["id"])
                    elif isinstance(entry.get("name"), str):
                        channels[entry["id"]] = entry["name"]
            out = Source(file, "slack-export", "")
            for channel, name in days:
                src, doc = load(name)
                if not isinstance(doc, list):
                    raise src.error((), f"expected a list of messages (a day of a Slack channel), got {_kind(doc)}")
                try:
                    records = slack_records(doc, users, channels, channel, bots)
                    for rec in records:
                        _check_depth(rec.item, rec.path)
                except SourceError as exc:
                    raise src.error(exc.path, exc.message, exc.field) from None
                for rec in records:
                    rec.origin, rec.group = src, channel
                out.records.extend(records)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, OSError, EOFError) as exc:
        raise InvalidInput(f"{file}: a damaged or unsupported zip archive: {exc}") from None
    if not out.records:
        raise InvalidInput(f"{file}: no messages in this Slack export")
    # one time line across the channels; a channel's own messages keep their order
    out.records.sort(key=lambda rec: rec.item["timestamp"])
    return out


# ------------------------------------------------------------------------------------------------- assistant exports

# The data exports of ChatGPT (Settings, Data controls, Export data) and of Claude.ai (Settings, Privacy, Export data):
# zips holding conversations.json, a list of conversations, beside other files (user.json, message_feedback.json,
# shared_conversations.json, chat.html and the images for ChatGPT; users.json and projects.json for Claude).
# conversations.json, or, in a large export, the files it is cut into: conversations-000.json, ...
_CONVERSATION_FILE = re.compile(r"^conversations(?:-\d+)?\.json$")
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
# ChatGPT's content kinds that are no part of what the conversation showed: the model's reasoning and its summary
# ("Thought for 38s"), the custom instructions sent at the head of every conversation, the saved memories given to
# the model
_CHATGPT_UNSAID = {"thoughts", "reasoning_recap", "user_editable_context", "model_editable_context"}
_CHATGPT_ROLES = ("user", "assistant", "system", "tool")
_CLAUDE_ROLES = {"human": "user", "assistant": "assistant"}


def _read_assistant_archive(file: str, data: bytes | BinaryIO, encoding: str) -> Source | None:
    """A ChatGPT or Claude.ai export zip: its ``conversations.json`` (at its top, or inside one folder), or the
    files a large export is cut into, ``conversations-000.json``, ``conversations-001.json``, ... (each a list of
    conversations), read in that order as one; errors name the file inside the archive. None for another zip, and
    for a zip whose one such file holds no ChatGPT or Claude.ai conversations (read as the zip's one file is)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data) as archive:
            members = sorted((info for info in archive.infolist() if not info.is_dir()
                              and _CONVERSATION_FILE.match(posixpath.basename(info.filename))
                              and info.filename.count("/") <= 1 and not info.filename.startswith("__MACOSX/")),
                             key=lambda info: info.filename)
            if not members:
                return None
            folder = posixpath.dirname(members[0].filename)
            members = [info for info in members if posixpath.dirname(info.filename) == folder]
            declared = sum(info.file_size for info in members)
            if declared > MAX_UNZIPPED:
                raise InvalidInput(f"{file}: its conversations unpack to {_size(declared, MAX_UNZIPPED)} (as the "
                                   f"archive declares), more than the {_size(MAX_UNZIPPED, declared)} hippo ingest "
                                   f"unpacks from a zip archive; unzip it and ingest its files one at a time")
            room = MAX_UNZIPPED
            parts: list[Source] = []
            for info in members:
                shown = f"{file} ({info.filename})"
                raw = _unpacked(file, archive, info, room)
                room -= len(raw)
                text = _decode(shown, raw, encoding)
                del raw
                kind = _assistant_kind(text)
                if kind is None:
                    if len(members) == 1:
                        return None
                    raise InvalidInput(f"{shown}: not a list of ChatGPT or Claude.ai conversations")
                if parts and kind != parts[0].format:
                    raise InvalidInput(f"{shown}: {kind} conversations beside {parts[0].format} ones in "
                                       f"{parts[0].file}")
                parts.append(Source(shown, kind, text))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, OSError, EOFError) as exc:
        raise InvalidInput(f"{file}: a damaged or unsupported zip archive: {exc}") from None
    return _assistant_source(Source(file, parts[0].format, ""), parts)


def _json_items(file: str, text: str) -> Iterator[tuple[int, Any]]:
    """The items of the JSON list ``text`` holds, one at a time and each parsed once: a list of thousands of
    conversations is never held as one object. Errors name the line and column as :func:`_load_document` does."""
    decoder = json.JSONDecoder()
    at = _JSON_SPACE.match(text, text.startswith("\ufeff")).end()

    def fail(msg: str, pos: int) -> InvalidInput:
        return InvalidInput(f"{file}:{text.count(chr(10), 0, pos) + 1}: not valid JSON ({msg} at column "
                            f"{pos - (text.rfind(chr(10), 0, pos) + 1) + 1})")

    if not text.startswith("[", at):
        raise fail("expected '['", at)
    at = _JSON_SPACE.match(text, at + 1).end()
    if text.startswith("]", at):
        end = at + 1
    else:
        k = 0
        while True:
            try:
                item, at = decoder.raw_decode(text, at)
            except json.JSONDecodeError as exc:
                raise fail(exc.msg, exc.pos) from None
            except RecursionError:
                raise InvalidInput(f"{file}:{_deep_line(text[at:]) + text.count(chr(10), 0, at)}: JSON nested too "
                                   f"deeply to read") from None
            yield k, item
            k += 1
            at = _JSON_SPACE.match(text, at).end()
            if text.startswith(",", at):
                at = _JSON_SPACE.match(text, at + 1).end()
                continue
            if not text.startswith("]", at):
                raise fail("expected ',' or ']'", at)
            end = at + 1
            break
    end = _JSON_SPACE.match(text, end).end()
    if end != len(text):
        raise fail("extra data", end)


def _assistant_kind(text: str) -> str | None:
    """"chatgpt" or "claude" when ``text`` is the ``conversations.json`` of one's export (a JSON list of
    conversations: ChatGPT's with a ``mapping`` of messages, Claude's with ``chat_messages``), else None. Only the
    first conversation is read."""
    at = _JSON_SPACE.match(text, text.startswith("\ufeff")).end()
    if not text.startswith("[", at):
        return None
    at = _JSON_SPACE.match(text, at + 1).end()
    if not text.startswith("{", at):
        return None
    try:
        first, _ = json.JSONDecoder().raw_decode(text, at)
    except (ValueError, RecursionError):
        return None
    return _conversation_kind(first)


def _conversation_kind(obj: Any) -> str | None:
    if isinstance(obj, dict) and "mapping" in obj and ("current_node" in obj or "conversation_id" in obj):
        return "chatgpt"
    if isinstance(obj, dict) and "chat_messages" in obj and "uuid" in obj:
        return "claude"
    return None


def _read_assistant_export(file: str, text: str, kind: str) -> Source:
    """A ChatGPT or Claude.ai ``conversations.json``, a conversation at a time (:func:`_json_items`)."""
    src = Source(file, kind, text)
    return _assistant_source(src, [src])


def _assistant_source(out: Source, parts: list[Source]) -> Source:
    """``out`` with the conversations of ``parts`` (files of conversations, each its ``text``), one at a time, as
    records: in one time line, each conversation's group its title, or its title and id when two have it."""
    read = chatgpt_records if out.format == "chatgpt" else claude_records
    conversations: list[list[Record]] = []
    for part in parts:
        try:
            for k, conv in _json_items(part.file, part.text):
                records = read(conv, (k,))
                for rec in records:
                    _check_depth(rec.item, rec.path)
                    rec.origin = part
                conversations.append(records)
        except SourceError as exc:
            raise part.error(exc.path, exc.message, exc.field) from None
    named: dict[str, set[str]] = {}  # group -> the conversations of that title
    for records in conversations:
        for rec in records[:1]:
            named.setdefault(rec.group, set()).add(rec.item["session_id"])
    for records in conversations:  # two conversations of one title are told apart by their ids
        for rec in records:
            if len(named[rec.group]) > 1:
                rec.group = f"{rec.group} ({rec.item['session_id']})"
    out.records = _one_time_line(conversations)
    if not out.records:
        raise InvalidInput(f"{out.file}: the export holds no messages")
    return out


def _one_time_line(conversations: Iterable[list[Record]]) -> list[Record]:
    """The messages of every conversation in one time line; a conversation's own keep their order (a message may
    be written a moment before the one it follows: it is placed at the latest time before it)."""
    out: list[tuple[datetime, int, Record]] = []
    for records in conversations:
        latest: datetime | None = None
        for rec in records:
            when = rec.item.get("timestamp")
            latest = when if latest is None or (when is not None and when > latest) else latest
            out.append((latest or datetime.min.replace(tzinfo=timezone.utc), len(out), rec))
    out.sort(key=lambda t: (t[0], t[1]))
    return [rec for _, _, rec in out]


def _conversation_group(title: str | None, ident: str) -> str:
    """A conversation's group (``--split``: its namespace is ``<namespace>.<group>``): its title, spaces folded,
    ``conversation <id>`` without one."""
    name = " ".join(title.split()) if isinstance(title, str) else ""
    return name or f"conversation {ident}"


def _epoch(value: Any, path: Path, key: str) -> datetime | None:
    """ChatGPT's times: seconds since 1970 (UTC) with a fraction; null for none."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SourceError(path, f"field {key!r} must be seconds since 1970 (a number) or null, got {_kind(value)}",
                          key)
    try:
        return datetime.fromtimestamp(value, timezone.utc)
    except (OverflowError, OSError, ValueError):
        raise SourceError(path, f"field {key!r} is no time hippo can store: {value!r}", key) from None


def _first_id(obj: dict, keys: tuple[str, ...], path: Path) -> str:
    """The first of ``keys`` of ``obj`` that is a non-empty string (an export's id); refused naming the first key."""
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value
    raise SourceError(path, f"field {keys[0]!r} must be a non-empty string, got {_kind(obj.get(keys[0]))}", keys[0])


def _chatgpt_branch(conv: dict, path: Path) -> list[tuple[str, dict]]:
    """The nodes of the branch the conversation shows, from its first to its ``current_node``: the export holds every
    branch (a regenerated answer, a prompt edited), each node naming its ``parent``. Without a ``current_node``, the
    branch of the last node the mapping lists without children."""
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        raise SourceError(path, f"field 'mapping' must be an object of messages, got {_kind(mapping)}", "mapping")
    current = conv.get("current_node")
    if current is None:
        leaves = [key for key, node in mapping.items() if isinstance(node, dict) and not node.get("children")]
        if not leaves:
            return []
        current = leaves[-1]
    if not isinstance(current, str) or current not in mapping:
        raise SourceError(path, f"field 'current_node' must name a node of 'mapping', got {current!r}", "current_node")
    branch: list[tuple[str, dict]] = []
    seen: set[str] = set()
    key: Any = current
    while key is not None:
        node = mapping.get(key) if isinstance(key, str) else None
        if not isinstance(node, dict):
            where = (*path, "mapping", branch[-1][0]) if branch else path
            raise SourceError(where, f"a node's parent {key!r} is not a node of 'mapping'", "parent")
        if key in seen:
            raise SourceError((*path, "mapping", key), "the nodes' parents go round in a circle", "parent")
        seen.add(key)
        branch.append((key, node))
        key = node.get("parent")
    branch.reverse()
    return branch


def _chatgpt_parts(parts: Any, path: Path) -> list[str]:
    """The words of a message's ``parts``: strings, an audio's transcription; an image leaves ``[image]``; other media
    (the audio itself, a video) nothing."""
    if parts is None:
        return []
    if not isinstance(parts, list):
        raise SourceError(path, f"field 'content.parts' must be a list, got {_kind(parts)}", "content")
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            kind = part.get("content_type")
            if kind == "image_asset_pointer":
                out.append("[image]")
            elif isinstance(part.get("text"), str):  # audio_transcription, and parts of words to come
                out.append(part["text"])
    return out


def _chatgpt_text(content: Any, path: Path) -> str | None:
    """What a ChatGPT message's ``content`` shows; None for the kinds left out (:data:`_CHATGPT_UNSAID`)."""
    if not isinstance(content, dict):
        raise SourceError(path, f"field 'content' must be an object, got {_kind(content)}", "content")
    kind = content.get("content_type")
    if not isinstance(kind, str):
        raise SourceError(path, f"field 'content.content_type' must be a string, got {_kind(kind)}", "content")
    if kind in _CHATGPT_UNSAID:
        return None
    if kind in ("text", "multimodal_text"):
        pieces = _chatgpt_parts(content.get("parts"), path)
    elif kind == "tether_browsing_display":  # a web page or search results as the browsing tool gave them
        pieces = [v for v in (content.get("result"), content.get("summary")) if isinstance(v, str)][:1]
    elif kind == "tether_quote":
        pieces = [v for v in (content.get("title"), content.get("text")) if isinstance(v, str)]
    else:  # code, execution_output, system_error, and kinds to come: their text, or their parts
        pieces = ([content["text"]] if isinstance(content.get("text"), str)
                  else _chatgpt_parts(content.get("parts"), path) if isinstance(content.get("parts"), list) else [])
    return "\n".join(p for p in pieces if p.strip())


def chatgpt_records(conv: Any, path: Path) -> list[Record]:
    """One conversation of a ChatGPT export (``{"title", "create_time", "mapping": {id: {"message", "parent",
    "children"}}, "current_node", "conversation_id"}``): the messages of the branch it shows (:func:`_chatgpt_branch`),
    each with its author's role (``user``, ``assistant``, ``system``, ``tool``), a tool's name (``python``,
    ``browser``) as speaker, its ``create_time`` (else the time of the message before it, else the conversation's),
    the conversation's id as session and ``metadata = {"title", "chatgpt_id"}`` plus the assistant's ``model`` and the
    names of files attached. Text parts are joined, an image leaves ``[image]``; code and a tool's output are their
    text; an assistant's message to a tool (``recipient`` not ``all``) is the line ``[tool call <recipient>(<text>)]``.
    Left out: messages hidden from the conversation (``is_visually_hidden_from_conversation``: the system prompt,
    the custom instructions), the model's reasoning (``thoughts``, ``reasoning_recap``, the ``analysis`` channel),
    the custom instructions and saved memories given to the model wherever they appear, and messages without
    words."""
    if not isinstance(conv, dict):
        raise SourceError(path, f"expected a conversation object, got {_kind(conv)}")
    cid = _first_id(conv, ("conversation_id", "id"), path)
    title = conv.get("title")
    if title is not None and not isinstance(title, str):
        raise SourceError(path, f"field 'title' must be a string, got {_kind(title)}", "title")
    latest = _epoch(conv.get("create_time"), path, "create_time")
    group = _conversation_group(title, cid)
    out: list[Record] = []
    for key, node in _chatgpt_branch(conv, path):
        msg = node.get("message")
        at = (*path, "mapping", key)
        if msg is None:
            continue
        if not isinstance(msg, dict):
            raise SourceError(at, f"field 'message' must be an object or null, got {_kind(msg)}", "message")
        at = (*at, "message")
        author = msg.get("author")
        role = author.get("role") if isinstance(author, dict) else None
        if role not in _CHATGPT_ROLES:
            raise SourceError(at, f"field 'author.role' must be one of {list(_CHATGPT_ROLES)}, got {role!r}", "author")
        when = _epoch(msg.get("create_time"), at, "create_time")
        latest = when or latest
        meta = msg.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise SourceError(at, f"field 'metadata' must be an object, got {_kind(meta)}", "metadata")
        meta = meta or {}
        if meta.get("is_visually_hidden_from_conversation") is True or msg.get("channel") == "analysis":
            continue
        text = _chatgpt_text(msg.get("content"), at)
        if text is None:
            continue
        recipient = msg.get("recipient")
        if role == "assistant" and isinstance(recipient, str) and recipient not in ("all", "") and text.strip():
            text = f"[tool call {recipient}({text})]"
        attached = meta.get("attachments") if isinstance(meta.get("attachments"), list) else []
        names = [a["name"] for a in attached if isinstance(a, dict) and isinstance(a.get("name"), str)
                 and a["name"].strip()]
        if not text.strip():
            if not names:
                continue
            text = "\n".join(f"[file: {name}]" for name in names)
        metadata: dict[str, Any] = {"title": title} if title else {}
        metadata["chatgpt_id"] = key
        if role == "assistant" and isinstance(meta.get("model_slug"), str):
            metadata["model"] = meta["model_slug"]
        if names:
            metadata["attachments"] = names
        item: dict[str, Any] = {"text": text, "role": role, "timestamp": latest, "session_id": cid,
                                "metadata": metadata}
        name = author.get("name")
        if isinstance(name, str) and name.strip():
            item["speaker"] = name.strip()
        # which message it is as the export wrote it: its conversation, node, author and what it says; not the title
        # (a conversation renamed keeps its messages) nor the metadata the app adds to as it changes
        raw = {"conversation": cid, "id": key, "author": _picked(author, ("role", "name")),
               **_picked(msg, ("create_time", "content", "recipient"))}
        out.append(Record(item, at, group=group, digest=source_digest("chatgpt", raw),
                          ident=source_id("chatgpt", {"conversation": cid, "id": key})))
    return out


def _claude_branch(msgs: list, path: Path) -> list[tuple[int, Any]]:
    """The messages of the branch a Claude.ai conversation shows, with their places in ``chat_messages``: the list
    as written, or, when its messages name their ``parent_message_uuid`` and two answer one (a prompt edited, an
    answer retried), the branch of the latest message (by ``created_at``; the last of the list when a time does
    not read), the one the person wrote or read last."""
    indexed = list(enumerate(msgs))
    by_id = {m["uuid"]: (k, m) for k, m in indexed if isinstance(m, dict) and isinstance(m.get("uuid"), str)}
    parents = [m.get("parent_message_uuid") for _, m in indexed if isinstance(m, dict)]
    if not indexed or len(by_id) != len(indexed) or not all(isinstance(p, str) for p in parents) \
            or len(set(parents)) == len(parents):
        return indexed
    times = []
    for _, m in indexed:
        try:
            when = parse_iso(m["created_at"].strip())
        except (AttributeError, KeyError, ValueError):
            break
        times.append(when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc))
    latest = max(range(len(indexed)), key=lambda i: (times[i], i)) if len(times) == len(indexed) else -1
    branch: list[tuple[int, Any]] = []
    seen: set[str] = set()
    k, m = indexed[latest]
    while True:
        if m["uuid"] in seen:
            raise SourceError((*path, "chat_messages", k), "the messages' parents go round in a circle",
                              "parent_message_uuid")
        seen.add(m["uuid"])
        branch.append((k, m))
        parent = m["parent_message_uuid"]
        if parent not in by_id:
            break
        k, m = by_id[parent]
    branch.reverse()
    return branch


def _claude_text(msg: dict, path: Path) -> str:
    """What a Claude.ai message shows: its ``content`` blocks in order (text; a tool's use as the line
    ``[tool call name(input)]`` and its result's text; the model's ``thinking`` left out), else (no blocks, or none
    with words) its ``text``."""
    content = msg.get("content")
    if content is None or content == []:
        return _optional_text(msg, "text", path)
    if not isinstance(content, list):
        raise SourceError(path, f"field 'content' must be a list of content blocks, got {_kind(content)}", "content")
    pieces = []
    for k, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise SourceError(path, f"field 'content[{k}]' must be a content block with a 'type'", "content")
        kind = block["type"]
        if kind == "text" and isinstance(block.get("text"), str):
            pieces.append(block["text"])
        elif kind == "tool_use":
            name = block.get("name") if isinstance(block.get("name"), str) else "tool"
            args = block.get("input", {})
            args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            pieces.append(f"[tool call {name}({args})]")
        elif kind == "tool_result":
            said = _claude_result_text(block.get("content"))
            if said.strip():
                pieces.append(said)
        elif kind not in ("thinking", "redacted_thinking", "token_budget") and isinstance(block.get("text"), str):
            pieces.append(block["text"])
    said = "\n".join(p for p in pieces if p.strip())
    return said if said.strip() else _optional_text(msg, "text", path)


def _claude_result_text(content: Any) -> str:
    """The words of a Claude.ai ``tool_result`` block's ``content``: a string, or the ``title`` and ``text`` of its
    blocks (a page a web search found: its title and words), whatever their ``type``; what else a tool gives back
    (an image, data of the app's own) leaves nothing, and refuses nothing."""
    if isinstance(content, str):
        return content
    pieces = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, str):
            pieces.append(block)
        elif isinstance(block, dict):
            pieces.extend(v for v in (block.get("title"), block.get("text")) if isinstance(v, str) and v.strip())
    return "\n".join(pieces)


def claude_records(conv: Any, path: Path) -> list[Record]:
    """One conversation of a Claude.ai export (``{"uuid", "name", "created_at", "chat_messages": [{"uuid", "sender",
    "created_at", "text", "content", "attachments", "files", "parent_message_uuid"}]}``): the messages of the branch it
    shows (:func:`_claude_branch`), ``human`` as role ``user``, ``assistant`` as ``assistant``, no speaker, the
    message's ``created_at``, the conversation's uuid as session, ``metadata = {"title", "claude_id"}`` plus the names
    of the files attached. The text is the content blocks' (:func:`_claude_text`), then each attachment's text as the
    export extracted it, after a line ``[file: <name>]``; a file without extracted text leaves that line alone."""
    if not isinstance(conv, dict):
        raise SourceError(path, f"expected a conversation object, got {_kind(conv)}")
    cid = _first_id(conv, ("uuid",), path)
    title = conv.get("name")
    if title is not None and not isinstance(title, str):
        raise SourceError(path, f"field 'name' must be a string, got {_kind(title)}", "name")
    msgs = conv.get("chat_messages")
    if not isinstance(msgs, list):
        raise SourceError(path, f"field 'chat_messages' must be a list, got {_kind(msgs)}", "chat_messages")
    group = _conversation_group(title, cid)
    out: list[Record] = []
    for k, msg in _claude_branch(msgs, path):
        at = (*path, "chat_messages", k)
        if not isinstance(msg, dict):
            raise SourceError(at, f"expected a message object, got {_kind(msg)}")
        mid = _first_id(msg, ("uuid",), at)
        role = _CLAUDE_ROLES.get(msg.get("sender")) if isinstance(msg.get("sender"), str) else None
        if role is None:
            raise SourceError(at, f"field 'sender' must be 'human' or 'assistant', got {msg.get('sender')!r}",
                              "sender")
        when = _iso_time(msg.get("created_at"), at, "created_at")
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        pieces = [_claude_text(msg, at)]
        names = []
        for key in ("attachments", "files"):
            files = msg.get(key)
            if files is None:
                continue
            if not isinstance(files, list):
                raise SourceError(at, f"field {key!r} must be a list, got {_kind(files)}", key)
            for f in files:
                if not isinstance(f, dict):
                    raise SourceError(at, f"field {key!r} must hold objects, got {_kind(f)}", key)
                name = f.get("file_name") if isinstance(f.get("file_name"), str) else "file"
                names.append(name)
                said = f.get("extracted_content")
                pieces.append(f"[file: {name}]\n{said}" if isinstance(said, str) and said.strip()
                              else f"[file: {name}]")
        text = "\n\n".join(p for p in pieces if p.strip())
        if not text.strip():
            continue
        metadata: dict[str, Any] = {"title": title} if title else {}
        metadata["claude_id"] = mid
        if names:
            metadata["attachments"] = names
        item = {"text": text, "role": role, "timestamp": when, "session_id": cid, "metadata": metadata}
        raw = {"conversation": cid, **_picked(msg, ("uuid", "sender", "created_at", "text", "content",
                                                    "attachments", "files"))}
        out.append(Record(item, at, group=group, digest=source_digest("claude", raw),
                          ident=source_id("claude", {"conversation": cid, "uuid": mid})))
    return out
