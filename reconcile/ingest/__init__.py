"""Loading files into the store: the building blocks every format stages with, and the driver.

- ``files``, ``lines``, ``inputs``: how a file is opened, hashed, counted and read as lines;
- ``validate``, ``guard``, ``ranges``, ``billing``: typed fields, strict JSON, allowed ranges and
  what providers bill, as SQL;
- ``landing``, ``ownership``, ``accounting``: one path from any format's staged tables into the store;
- ``driver``: :func:`reconcile.ingest.driver.ingest`, which discovers files, asks the formats
  (``reconcile.formats``) which one each file is, and loads each in one transaction.

The formats build on the blocks and the driver drives the formats, so this package's ``__init__``
imports nothing: importing a block never loads the formats.
"""
