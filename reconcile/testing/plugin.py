"""pytest plugin for block one. Opt in — it is deliberately not registered through an entry point:

    # conftest.py (the root one) or a test module
    pytest_plugins = ["reconcile.testing.plugin"]
    # or on the command line: pytest -p reconcile.testing.plugin

    def test_the_fence_holds(fence_protocol):
        report = fence_protocol(loop, limits=Limits(max_wall_seconds=60), patch_time=True)

``fence_protocol(loop, **options)`` runs ``reconcile.testing.BlockOne`` in the test's temporary
folder and returns its report; when block one does not hold it fails the test with
``BlockOneFailure``, whose message names each failing stub, the stop expected, the stop seen and
the findings. ``fake_clock`` is a fresh ``FakeClock`` for a harness that must be handed its clock
before the protocol starts. ``--block-one-keep DIR`` copies every protocol's journals and store to
DIR (one folder per test) to open with ``reconcile`` afterwards.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from reconcile.testing.clock import FakeClock
from reconcile.testing.protocol import BlockOne
from reconcile.testing.verdict import BlockOneReport


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("reconcile").addoption(
        "--block-one-keep", metavar="DIR", default=None,
        help="copy each block-one protocol's journals and store to DIR/<test name> (reconcile.testing.plugin)")


@pytest.fixture
def fake_clock() -> FakeClock:
    """A fresh FakeClock: pass it to the harness and to ``fence_protocol(..., clock=fake_clock)``."""
    return FakeClock()


@pytest.fixture
def fence_protocol(request: pytest.FixtureRequest, tmp_path: Path):
    """``fence_protocol(loop, **options)``: block one over ``loop``, in the test's folder; a failure fails the test."""
    keep = request.config.getoption("--block-one-keep")
    runs = 0

    def run(loop: Any, **options: Any) -> BlockOneReport:
        __tracebackhide__ = True  # pytest shows the failure at the test's call, not inside the kit
        nonlocal runs
        runs += 1
        workdir = tmp_path / f"block-one-{runs}"
        try:  # a BlockOneFailure is an AssertionError: pytest shows its message as the failure
            return BlockOne(loop, workdir=workdir, **options).run()
        finally:
            if keep:
                name = re.sub(r"[^\w.-]+", "_", request.node.name)
                shutil.copytree(workdir, Path(keep) / f"{name}-{runs}", dirs_exist_ok=True)

    return run
