"""The one place that decides how an input file is opened — and what is known about it first.

- **Paths are data.** DuckDB's readers expand ``*``, ``?`` and ``[…]`` in a file name, so a user's
  file is never handed to them by its own name: each file of a load gets a private alias (a
  symbolic link with a plain name, in a directory only this load uses), and the readers see only
  aliases. ``bracket[ab].jsonl`` and ``sess*.jsonl`` are read as themselves, never as patterns.
- **One pass over the bytes** gives the file's SHA-256, its size, whether it is gzip (by its magic
  bytes, not its name), how many lines it has — split on ``\\n`` only, as JSON Lines defines them (a
  ``\\r\\n`` ending is one line; a raw ``\\r`` inside a line is not a line break) — and whether it
  holds a raw ``\\r``, which DuckDB's line reader would take for a line break: such a file is read
  by the exact path instead. A file that cannot be read (no permission, a truncated or broken gzip
  stream) is not loaded and says why.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import re
import shutil
import struct
import tempfile
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from reconcile.ingest.marks import Mark, MarkFinder
from reconcile.ingest.result import IngestReport, PassedOver

CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"


class FileFailed(Exception):
    """One file could not be loaded; ``str()`` is the reason recorded for it."""


@dataclass
class Source:
    """An input file, as the readers will see it."""

    path: Path  # the user's file
    sha256: str = ""
    size: int = 0
    gzip: bool = False
    lines: int = 0  # split on "\n"; a last line without one counts
    raw_cr: bool = False  # a "\r" not followed by "\n": the fast line reader would split there
    newline_at_end: bool = True
    error: str | None = None  # why the file cannot be read, if it cannot
    alias: str = ""  # the name the readers are given
    mtime_ns: int | None = None  # its modification time, if safely older than the read (see stamp)
    shown: Path | None = None  # the user's file, where ``path`` is a copy of part of it (a tail read: ``tail``)
    mark: Mark | None = None  # where a later read may go on from (``tail``); None: read it whole next time
    first_line: int = 1  # the file's line number of the first line read (a tail read starts past the first)
    carry: str | None = None  # a tail read's format state at ``first_line`` (JSON, ``tail.Checkpoint.state``)

    @property
    def name(self) -> str:
        """The path as the store keeps it (``stored_name``)."""
        return stored_name(self.shown or self.path)

    @property
    def user_path(self) -> Path:
        """The user's file this source reads (``path`` itself, or the file a tail copy was taken from)."""
        return self.shown or self.path


def stored_name(path: str | Path) -> str:
    """``path`` as the store and the terminal keep it: itself when it is valid UTF-8 (nearly always).

    A file name is bytes; one that is not UTF-8 (``bad\\xff.jsonl``) comes to Python with stand-ins
    that neither DuckDB nor a terminal accepts, so its odd bytes are kept as ``\\xff`` escapes.
    ``on_disk`` turns a stored name back into the path to open.
    """
    text = os.fspath(path)
    return text if text.isprintable() or _utf8(text) else os.fsencode(text).decode("utf-8", "backslashreplace")


def on_disk(stored: str) -> str:
    """The path to open for a name the store keeps (the inverse of ``stored_name``)."""
    if "\\x" not in stored or os.path.lexists(stored):
        return stored
    unescaped = os.fsdecode(re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]),
                                   stored.encode("utf-8", "surrogateescape")))
    return unescaped if os.path.lexists(unescaped) else stored


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def inspect(path: Path) -> Source:
    """Hash, size and line facts of ``path`` in one pass (decompressing gzip); never raises for a bad file."""
    source = Source(path)
    digest = hashlib.sha256()
    try:
        source.mtime_ns = stamp(path)
        with open(path, "rb") as handle:
            head = handle.read(2)
            source.gzip = head == GZIP_MAGIC
            inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if source.gzip else None
            marks = MarkFinder() if inflate is None else None  # a gzip file is a finished file: never read by its tail
            counter = LineCounter()
            pending = head
            while True:
                digest.update(pending)
                source.size += len(pending)
                if marks is not None:
                    marks.feed(pending)
                if inflate is not None:
                    data = inflate.decompress(pending)
                    while inflate.unused_data:  # concatenated gzip members, as gzip(1) writes them
                        rest = inflate.unused_data
                        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
                        data += inflate.decompress(rest)
                    counter.feed(data)
                else:
                    counter.feed(pending)
                pending = handle.read(CHUNK)
                if not pending:
                    break
            if inflate is not None:
                counter.feed(inflate.flush())
                if not inflate.eof:
                    raise EOFError("the gzip stream ends early (a truncated or partly written file)")
            identity = os.fstat(handle.fileno())
    except PermissionError:
        source.error = "permission denied: reconcile cannot read the file (check its permissions)"
        return source
    except zlib.error as exc:
        source.error = f"not a valid gzip stream ({exc}): the file starts like gzip but is not one"
        return source
    except EOFError as exc:
        source.error = str(exc)
        return source
    except OSError as exc:
        source.error = f"cannot be read: {exc.strerror or exc}"
        return source
    source.sha256 = digest.hexdigest()
    source.lines, source.raw_cr, source.newline_at_end = counter.result()
    if marks is not None and not source.raw_cr:
        source.mark = marks.mark(identity.st_dev, identity.st_ino)
    return source


def peeked(path: Path) -> Source:
    """What a reader needs before the bytes are read: whether ``path`` is gzip (its first two bytes).

    The driver reads a new file's lines while ``inspect`` hashes and counts them on another thread;
    ``settle`` then fills in what ``inspect`` found. Raises OSError for a file that cannot be opened.
    """
    source = Source(path)
    with open(path, "rb") as handle:
        source.gzip = handle.read(2) == GZIP_MAGIC
    return source


SETTLED = ("sha256", "size", "gzip", "lines", "raw_cr", "newline_at_end", "error", "mtime_ns", "mark")


def settle(source: Source, found: Source) -> None:
    """Give a peeked ``source`` the facts ``inspect`` found (its alias stays)."""
    for name in SETTLED:
        setattr(source, name, getattr(found, name))


RACY_NS = 2_000_000_000  # a file changed this close to being read may change again within its clock's tick


def stamp(path: Path) -> int | None:
    """``path``'s modification time in ns, or None if it is too recent to vouch for the content read now.

    As git does with its index: a file modified within ``RACY_NS`` of now could be rewritten again,
    same size, within the same timestamp tick; such a file is hashed again next time, not trusted.
    """
    mtime = os.stat(path).st_mtime_ns
    return mtime if mtime < time.time_ns() - RACY_NS else None


class LineCounter:
    """Counts "\n" line breaks, and notices a raw "\r" (one not followed by "\n"), across chunk boundaries."""

    def __init__(self):
        self.newlines = 0
        self.raw_cr = False
        self.pending_cr = False  # the previous chunk ended with "\r": it is raw unless this one starts with "\n"
        self.last = b""

    def feed(self, data: bytes) -> None:
        if not data:
            return
        self.newlines += data.count(b"\n")
        if self.pending_cr and data[:1] != b"\n":
            self.raw_cr = True
        if b"\r" in data:  # most files have none: one scan for it, not two counts
            inner = data.count(b"\r") - data.count(b"\r\n") - (1 if data.endswith(b"\r") else 0)
            self.raw_cr = self.raw_cr or inner > 0
        self.pending_cr = data.endswith(b"\r")
        self.last = data[-1:]

    def result(self) -> tuple[int, bool, bool]:
        at_end = self.last in (b"", b"\n")
        return self.newlines + (0 if at_end else 1), self.raw_cr or self.pending_cr, at_end


def _is_eval_archive(path: Path) -> bool:
    """An Inspect AI ``.eval`` log: a zip holding ``header.json``."""
    try:
        with zipfile.ZipFile(path) as archive:
            return "header.json" in archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return False


ZSTD = 93  # the ZIP method number of Zstandard: inspect-ai 0.3.285 writes every .eval member with it


class _Bounded(io.RawIOBase):
    """The next ``size`` bytes of a file, as a stream: one zip member's compressed bytes, read in chunks."""

    def __init__(self, handle, size: int):
        self.handle, self.left = handle, size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.handle.read(min(len(buffer), self.left))
        buffer[:len(data)] = data
        self.left -= len(data)
        return len(data)


def _member(archive: zipfile.ZipFile, path: Path, name: str, stack) -> io.RawIOBase:
    """A member of an ``.eval`` archive as a stream of its bytes: the standard library inflates deflated ones; a
    Zstandard one (Python 3.11's ``zipfile`` cannot) is read from its local header on with ``zstandard``, in
    chunks. Any other method cannot be read: the file fails, naming it."""
    info = archive.getinfo(name)
    if info.compress_type != ZSTD:
        try:
            return stack.enter_context(archive.open(info))
        except NotImplementedError as exc:
            raise FileFailed(f"member {name} of the Inspect AI archive is compressed with ZIP method "
                             f"{info.compress_type}, which reconcile cannot read ({exc}); nothing from the file "
                             "was loaded. Re-write the log as JSON (inspect log convert --to json) and ingest that.")
    import zstandard

    raw = stack.enter_context(open(path, "rb"))
    raw.seek(info.header_offset)
    header = raw.read(30)
    if header[:4] != b"PK\x03\x04":
        raise FileFailed(f"member {name} of the Inspect AI archive has no local header where the archive's directory "
                         "says it starts: the file is damaged; nothing from it was loaded.")
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    raw.seek(info.header_offset + 30 + name_length + extra_length)
    return stack.enter_context(zstandard.ZstdDecompressor().stream_reader(_Bounded(raw, info.compress_size)))


def _eval_document(path: Path, target: str) -> None:
    """Write ``{"header": …, "samples": [...]}`` from an ``.eval`` archive, member by member (bytes, not parsed:
    memory stays bounded whatever the archive's size). A member that cannot be read fails the file, naming why."""
    with zipfile.ZipFile(path) as archive, open(target, "wb") as out, contextlib.ExitStack() as stack:
        samples = sorted((name for name in archive.namelist()
                          if name.startswith("samples/") and name.endswith(".json")), key=_sample_order)
        try:
            out.write(b'{"header": ')
            shutil.copyfileobj(_member(archive, path, "header.json", stack), out, CHUNK)
            out.write(b', "samples": [')
            for number, name in enumerate(samples):
                out.write(b"," if number else b"")
                with contextlib.ExitStack() as each:
                    shutil.copyfileobj(_member(archive, path, name, each), out, CHUNK)
            out.write(b"]}")
        except (zipfile.BadZipFile, OSError) as exc:
            raise FileFailed(f"the Inspect AI archive cannot be read ({exc}); nothing from it was loaded.") from exc
        except Exception as exc:
            if type(exc).__name__ == "ZstdError":
                raise FileFailed(f"a Zstandard-compressed member of the Inspect AI archive cannot be read ({exc}); "
                                 "nothing from it was loaded.") from exc
            raise


def _sample_order(name: str) -> tuple:
    """samples/<id>_epoch_<n>.json in id and epoch order (numbers as numbers)."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


# A path DuckDB's readers take literally: no glob or hive-partition character, no compression suffix they
# would act on. Any other name is read through a link of our own naming (a name is data, not a pattern).
_LITERAL_PATH = re.compile(r"/[A-Za-z0-9._/+-]*")
_COMPRESSED = (".gz", ".gzip", ".zst", ".zstd", ".lz4", ".bz2", ".xz", ".snappy", ".br", ".brotli", ".zip", ".tar")


def _literal(path: str) -> bool:
    return _LITERAL_PATH.fullmatch(path) is not None and not path.lower().endswith(_COMPRESSED)


class Aliases:
    """The names DuckDB reads the files of one load by: plain-named links in a directory nobody else uses,
    or the file's own absolute path where DuckDB would read that literally (a link a file cost up to a
    quarter of a millisecond: half a second for 2,000 small sessions).

    With ``decompress`` (for readers that do not inflate gzip themselves: documents read whole),
    a gzip file's alias is its decompressed copy, streamed to disk rather than held in memory.
    """

    def __init__(self, sources: list[Source], decompress: bool = False):
        self.sources = sources
        self.decompress = decompress
        self.folder: str | None = None
        self.direct: list[str] = []  # the files read by their own path

    @property
    def inputs(self) -> list[str]:
        """What an error about reading the input names: the links' folder, or a file's own path."""
        return [self.folder, *self.direct] if self.folder else list(self.direct)

    def __enter__(self) -> list[Source]:
        self.folder = tempfile.mkdtemp(prefix="reconcile-")
        try:
            return self._made()
        except BaseException:
            self.__exit__()
            raise

    def _made(self) -> list[Source]:
        for number, source in enumerate(self.sources, 1):
            own = os.path.abspath(source.path)
            if not source.gzip and _literal(own) and not (self.decompress and own.endswith(".eval")):
                source.alias = own
                self.direct.append(own)
                continue
            if source.gzip and self.decompress:
                alias = os.path.join(self.folder, f"f{number}.txt")
                with gzip.open(source.path) as packed, open(alias, "wb") as plain:
                    shutil.copyfileobj(packed, plain, CHUNK)
            elif self.decompress and _is_eval_archive(source.path):
                alias = os.path.join(self.folder, f"f{number}.json")
                _eval_document(source.path, alias)
            else:
                alias = os.path.join(self.folder, f"f{number}{'.gz' if source.gzip else '.txt'}")
                os.symlink(os.path.abspath(source.path), alias)
            source.alias = alias
        return self.sources

    def __exit__(self, *exc) -> None:
        if self.folder and os.path.isdir(self.folder):
            for name in os.listdir(self.folder):
                os.unlink(os.path.join(self.folder, name))
            os.rmdir(self.folder)


def held(path: str, hold: float | None, report: IngestReport) -> bool:
    """True (and reported) when ``path``'s writer is mid-line: its last byte is no newline and it changed within
    ``hold`` seconds. A line format's last line is whole only with its newline; a writer that stopped for good
    is not waited for once ``hold`` has passed (its cut line is then a reject, as in any ingest)."""
    if not hold or path.endswith(".gz"):
        return False
    try:
        stat = os.stat(path)
        if not stat.st_size or time.time() - stat.st_mtime > hold:
            return False
        with open(path, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) == b"\n":
                return False
    except OSError:
        return False  # gone or unreadable: the usual path says so
    report.passed_over.append(PassedOver(stored_name(path), "being written: its last line is not finished yet"))
    return True
