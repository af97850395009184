"""Engines: reading an export back (``dataset.py``: the one place an engine is chosen), writing one
(``export.py``), and Apache Spark (``spark.py``, ``spark_sql.py``, ``spark_dataset.py``, ``distributed.py``).

The interface every engine offers — ``Engine``, its ``Capabilities``, and ``DuckDBEngine`` — is in
``reconcile/engine.py``, below the store, so that every layer can be handed an engine.
"""
