"""What one pass over a plain line file finds for a later tail read to trust (``tail.Checkpoint``): its
identity, a digest of its first bytes, where its last newline is and a digest of the bytes before it.

Fed by ``files.inspect`` as it hashes a whole file, and by ``tail.read_tail`` as it copies a tail.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass
class Mark:
    """What one pass over a plain file found for a later tail read to trust (``tail.Checkpoint``).

    ``end`` is the offset just past the last newline; ``guard_from`` .. ``size`` are the bytes
    whose digest a later read checks (those before ``end``, up to ``GUARD_BYTES``, and a last
    line still without its newline); ``head`` is the digest of the first ``head_bytes`` bytes.
    """

    device: int
    inode: int
    size: int
    end: int
    head_bytes: int
    head: str
    guard_from: int
    guard: str
    start: int = 0  # the offset of the first line this read loaded (a tail read's resume offset)
    bom: bool = False  # the file starts with a UTF-8 byte-order mark (the line reader drops it)


HEAD_BYTES = 4096  # a file's first bytes: a rotated or replaced file differs in them (its first line's time, its id)
GUARD_BYTES = 65536  # the bytes before a checkpoint's end that a tail read checks first


class MarkFinder:
    """Finds a ``Mark`` in a stream of a plain file's bytes, fed in order from ``start`` (bounded memory).

    It keeps the first ``HEAD_BYTES`` (when fed from 0), the ``GUARD_BYTES`` before the last newline
    and whatever follows that newline; a last line longer than ``MAX_PENDING`` gives no mark.
    """

    MAX_PENDING = 64 * 1024 * 1024

    def __init__(self, start: int = 0):
        self.offset = start  # the file offset of the next byte fed
        self.head = b""
        self.window = b""  # the last GUARD_BYTES bytes up to the last newline seen
        self.pending = b""  # the bytes after the last newline
        self.end = start  # offset past the last newline seen
        self.failed = False

    def feed(self, data: bytes) -> None:
        if not data:
            return
        if self.offset < HEAD_BYTES:
            self.head += data[:HEAD_BYTES - self.offset]
        self.offset += len(data)
        cut = data.rfind(b"\n")
        if cut < 0:
            self.pending += data
            if len(self.pending) > self.MAX_PENDING:
                self.failed, self.pending = True, b""
            return
        upto = self.pending + data[:cut + 1] if cut + 1 < GUARD_BYTES else data[cut + 1 - GUARD_BYTES:cut + 1]
        self.window = (self.window + upto)[-GUARD_BYTES:]
        self.pending = data[cut + 1:]
        self.end = self.offset - len(self.pending)

    def mark(self, device: int, inode: int, head: str | None = None, head_bytes: int | None = None) -> "Mark | None":
        """The mark of what was fed; ``head``/``head_bytes`` where the stream did not start at 0 (a tail read)."""
        if self.failed:
            return None
        guarded = self.window[-(GUARD_BYTES if self.end >= GUARD_BYTES else self.end):] if self.end else b""
        if head is None:
            head_bytes = min(len(self.head), self.end)
            head = hashlib.sha256(self.head[:head_bytes]).hexdigest()
        return Mark(device, inode, self.offset, self.end, head_bytes, head, self.end - len(guarded),
                    hashlib.sha256(guarded + self.pending).hexdigest(), bom=self.head.startswith(b"\xef\xbb\xbf"))
