"""Recognising a file's format from its content, not its name."""

from __future__ import annotations

import json
from pathlib import Path

from reconcile.ingest.files import GZIP_MAGIC, inspect
from reconcile.ingest.lines import read_head
from reconcile.formats import FORMATS
from reconcile.formats.base import Format


class Unreadable(Exception):
    """The file cannot be read at all (permissions, a broken gzip stream): ``str()`` says why."""


def detect(path: Path) -> tuple[Format | None, str]:
    """The format of ``path`` and, when none matches, a short description of what was found.

    Raises ``Unreadable`` for a file that cannot be read, so it is reported as such, not as "no format".
    """
    try:
        head = read_head(path)
    except OSError as exc:
        raise Unreadable(f"cannot be read: {exc.strerror or exc} (check its permissions)") from exc
    values = _parse_head(head)
    text = head.decode("utf-8", errors="replace").removeprefix("\ufeff")
    for fmt in FORMATS.values():
        if fmt.sniff(values, text):
            return fmt, fmt.description
    if _starts_like_gzip(path):
        broken = inspect(path).error  # a full pass, but only for a gzip file no format recognised
        if broken:
            raise Unreadable(broken)
    return None, _describe(head, values)


def _starts_like_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def _parse_head(head: bytes) -> list[object]:
    text = head.decode("utf-8", errors="replace").removeprefix("\ufeff")  # a byte-order mark is not content
    stripped = text.lstrip()
    values: list[object] = []
    if not stripped:
        return values
    try:  # a whole small JSON document
        return [json.loads(stripped)]
    except (json.JSONDecodeError, RecursionError):  # RecursionError: nesting deeper than Python parses
        pass
    # JSON Lines: the first few complete lines. Split on "\n" only, as the loaders do: splitlines()
    # would also cut at U+2028, U+0085 and other separators that are legal inside a JSON string.
    for line in text.split("\n")[:5]:
        if line.strip():
            try:
                values.append(json.loads(line))
            except (json.JSONDecodeError, RecursionError):
                break
    return values


class Foreign(str):
    """What a file is when it is no text at all (an image, a PDF, an archive, a database, binary data): not a journal
    or transcript by any format, and no lines to count."""


# Kinds of file a folder of journals often holds beside them, by their first bytes
_FOREIGN = ((b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
            (b"%PDF-", "a PDF document"), (b"\x7fELF", "a program (ELF)"), (b"SQLite format 3\x00", "an SQLite database"),
            (b"PAR1", "a Parquet file: reconcile reads an export of its own with --from-parquet DIR"))

_ARCHIVES = ((b"PK\x03\x04", "zip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"),
             (b"7z\xbc\xaf\x27\x1c", "7-Zip"))


def _describe(head: bytes, values: list[object]) -> str:
    if not head.strip():
        return "an empty file"
    if head[8:12] == b"DUCK":
        return Foreign("a DuckDB database (a reconcile store?), not a transcript")
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return Foreign("a WebP image")
    for magic, kind in _FOREIGN:
        if head.startswith(magic):
            return Foreign(kind)
    for magic, kind in _ARCHIVES:
        if head.startswith(magic):
            return Foreign(f"a {kind} archive: reconcile reads plain and gzip files; unpack it first")
    if b"\x00" in head[:1024]:
        return Foreign("binary data")
    if values and isinstance(values[0], dict):
        keys = ", ".join(list(values[0])[:6])
        return f"JSON whose first object has keys {keys}"
    if values and isinstance(values[0], list):
        return "a JSON array"
    if b"\r" in head and b"\n" not in head:
        return ("text whose lines end in a bare CR (classic Mac line endings); JSON Lines needs LF or CRLF "
                "line ends: convert it, e.g. tr '\\r' '\\n'")
    first = head.decode("utf-8", errors="replace").strip().split("\n")[0][:60]
    return f"text that is not JSON (starts {first!r})"
