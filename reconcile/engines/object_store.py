"""Datasets in object stores: ``s3://`` (``s3a://``), ``gs://``, ``abfss://`` for ``--from-parquet`` and ``--to``.

The bytes move through pyarrow's file systems (S3, Google Cloud Storage, Azure Data Lake), which
take their credentials and endpoint the way each cloud's own tools do (``AWS_ACCESS_KEY_ID``,
``AWS_ENDPOINT_URL``, ``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_STORAGE_ACCOUNT_KEY`` …); no
secret is ever part of the URL reconcile prints.

- **Reading in DuckDB** copies the files the command needs (with a window, only its days) into a
  temporary folder and reads that, so each check reads local Parquet however often it scans a
  table; the copy is removed when the command ends. Disk, not memory, holds it.
- **Writing** (``export --to``, ``ingest --engine spark --to``) exports into a local mirror holding
  only the previous manifest, so the incremental rule is the folder's own: only the partitions
  whose fingerprint changed are uploaded, the days that have no rows any more are deleted, and the
  manifest goes last — a reader keeps reading the previous manifest's days until then.
- **Spark** reads the URL itself, through the cluster's Hadoop file systems (``s3a://`` needs
  hadoop-aws on the cluster; see docs/scale-out.md); only the manifest and the small price table
  are read here.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from reconcile.errors import BadInput

# URL scheme -> the scheme pyarrow knows it by (Hadoop's s3a/s3n are S3)
SCHEMES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "gcs": "gs", "abfs": "abfs", "abfss": "abfss"}
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class RemoteDataset:
    """A dataset folder in an object store, named by the URL the user gave (``s3a://bucket/runs``)."""

    url: str
    option: str  # the option that named it, for messages

    def __str__(self) -> str:
        return self.url

    @property
    def scheme(self) -> str:
        return self.url.split(":", 1)[0].lower()

    def child(self, *parts: str) -> str:
        """The URL of a file or folder of the dataset (as Spark is given it)."""
        return "/".join([self.url.rstrip("/"), *parts])

    def _filesystem(self):
        """pyarrow's file system for the URL and the dataset's path in it."""
        import pyarrow.fs as pafs

        scheme, rest = self.url.split("://", 1)
        try:
            return pafs.FileSystem.from_uri(f"{SCHEMES[scheme.lower()]}://{rest}")
        except Exception as exc:  # an unparseable URL, a cloud library pyarrow was built without
            raise BadInput(f"{self.option} {self.url}: {_reason(exc)}") from None

    @contextmanager
    def _failing(self, doing: str) -> Iterator[None]:
        """The store's errors (no bucket, no credentials, access denied, no route) as ours: the URL named."""
        try:
            yield
        except BadInput:
            raise
        except OSError as exc:
            raise BadInput(f"{self.option} {self.url}: {doing} failed: {_reason(exc)}. Check the URL, the "
                           "credentials and the endpoint (AWS_ENDPOINT_URL for an S3-compatible store).") from None

    def manifest_text(self) -> str | None:
        """The dataset's manifest, or None when the folder has none."""
        import pyarrow.fs as pafs

        fs, root = self._filesystem()
        with self._failing("reading the manifest"):
            try:
                with fs.open_input_stream(f"{root}/{MANIFEST}") as stream:
                    data = stream.read()
            except FileNotFoundError:
                bucket = root.split("/", 1)[0]
                if fs.get_file_info(bucket).type == pafs.FileType.NotFound:
                    raise BadInput(f"{self.option} {self.url}: the bucket {bucket!r} does not exist, or these "
                                   "credentials cannot see it; create it, or check the URL and the credentials") from None
                return None
        try:  # as strict as a local folder's manifest
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadInput(f"{self.child(MANIFEST)}: not a readable export manifest ({exc}); export again with "
                           "reconcile export --to.") from None

    def has_files(self) -> bool:
        import pyarrow.fs as pafs

        fs, root = self._filesystem()
        with self._failing("listing the folder"):
            info = fs.get_file_info(pafs.FileSelector(root, allow_not_found=True, recursive=False))
        return bool(info)

    def read_bytes(self, *parts: str) -> bytes:
        fs, root = self._filesystem()
        with self._failing(f"reading {'/'.join(parts)}"):
            with fs.open_input_stream("/".join([root, *parts])) as stream:
                return stream.read()

    def download(self, local: Path, manifest: dict, days_of) -> None:
        """Copy the manifest, the whole tables, and each partitioned table's days that ``days_of(table, days)``
        keeps, into ``local`` (the dataset's layout)."""
        import pyarrow.fs as pafs

        fs, root = self._filesystem()
        local_fs = pafs.LocalFileSystem()
        with self._failing("copying the dataset"):
            # the manifest as read once: the copy and the command see one snapshot of it, whatever an export does meanwhile
            (local / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
            for name, table in manifest["tables"].items():
                if table.get("partitioned_by") is None:
                    pafs.copy_files(f"{root}/{table['file']}", str(local / table["file"]), source_filesystem=fs,
                                    destination_filesystem=local_fs)
                    continue
                for day in days_of(name, sorted(table.get("days", {}))):
                    folder = local / name / f"day={day}"
                    folder.mkdir(parents=True)
                    pafs.copy_files(f"{root}/{name}/day={day}", str(folder), source_filesystem=fs,
                                    destination_filesystem=local_fs)

    def upload(self, mirror: Path, written: dict[str, list[str]], removed: dict[str, list[str]]) -> None:
        """Bring the dataset in line with ``mirror``, the local export: each written partition replaces its
        folder, each whole table its file, each removed day is deleted, and the manifest goes last."""
        import pyarrow.fs as pafs

        fs, root = self._filesystem()
        local_fs = pafs.LocalFileSystem()
        with self._failing("writing the dataset"):
            for name, days in written.items():
                for day in days:
                    source = mirror / name / f"day={day}" if day != "all" else mirror / f"{name}.parquet"
                    destination = f"{root}/{source.relative_to(mirror).as_posix()}"
                    if source.is_dir():
                        fs.delete_dir_contents(destination, missing_dir_ok=True)
                    pafs.copy_files(str(source), destination, source_filesystem=local_fs, destination_filesystem=fs)
            for name, days in removed.items():
                for day in days:
                    if _exists(fs, f"{root}/{name}/day={day}"):
                        fs.delete_dir(f"{root}/{name}/day={day}")
            pafs.copy_files(str(mirror / MANIFEST), f"{root}/{MANIFEST}", source_filesystem=local_fs,
                            destination_filesystem=fs)


def _exists(fs, path: str) -> bool:
    import pyarrow.fs as pafs

    return fs.get_file_info(path).type != pafs.FileType.NotFound


def _reason(exc: BaseException) -> str:
    """The first line of the store's answer (pyarrow's messages carry the cloud's own reason)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def local_copy(dataset: RemoteDataset, manifest: dict, days_of) -> Iterator[Path]:
    """A temporary folder holding the part of ``dataset`` a command reads; removed on every exit."""
    folder = Path(tempfile.mkdtemp(prefix="reconcile-remote-"))
    try:
        dataset.download(folder, manifest, days_of)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
