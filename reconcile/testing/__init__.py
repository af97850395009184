"""Seed 000's block one as a kit: a unit test of the fence, not of the model.

Install it in a harness's own test suite and drive the harness's loop with it:

    from reconcile.testing import run_block_one

    def loop(model, registry, limits=Limits(max_wall_seconds=60)):   # (model, registry) -> result with its stop
        return run_loop(model, registry, "block one", limits)

    run_block_one(loop, patch_time=True)        # limits: the adapter's default (or pass limits=)

It runs the loop once per stub tool of seed 000 (``ok_forever``, ``big_output``, ``sleep``,
``raise_after_write``) and per probe of the fences those four do not reach (``lookup_forever``,
``long_answers``, ``growing_history``, ``ok_varied``, ``poll``) with a scripted fake model that keeps
calling that stub — and, for a loop that takes ``limits``, once more per declared ceiling with that
ceiling's probe and every other ceiling lifted, so each is the one that stops a run — on a clock where
time passes only when something spends it; journals through ``reconcile.journal`` (or lets the
harness do it); loads the journals and the fake provider's usage report into a fresh store; runs
block four's invariants and the fence checks; and raises ``BlockOneFailure`` (an
``AssertionError``) naming each stub whose stop was not seed 000's or whose reconciliation does
not hold. For pytest, ``pytest_plugins = ["reconcile.testing.plugin"]`` adds a ``fence_protocol``
fixture. ``docs/testing-your-harness.md`` is the guide.

The modules: ``clock`` (``FakeClock``), ``model`` (``ScriptedModel``, ``call``, ``answer``),
``stubs`` (``stub_tools``, ``EXPECTATIONS``), ``recorder`` (the kit's journal), ``provider`` (the
fake provider's report), ``protocol`` (``BlockOne``), ``verdict`` (block four and the judgement),
``plugin`` (pytest; the only module that imports pytest).
"""

from reconcile.testing.clock import NIGHT, FakeClock, ToolTimeout
from reconcile.testing.model import FenceNeverStopped, ScriptedModel, Turn, TurnSpec, answer, call
from reconcile.testing.protocol import BlockOne, run_block_one, run_block_one_many
from reconcile.testing.recorder import Outcome, outcome_of
from reconcile.testing.stubs import EXPECTATIONS, STUBS, Expectation, WriteThenFail, stub_tools
from reconcile.testing.verdict import BLOCK_FOUR, FENCE, BlockOneFailure, BlockOneReport, StubOutcome

__all__ = ["BLOCK_FOUR", "EXPECTATIONS", "FENCE", "NIGHT", "STUBS", "BlockOne", "BlockOneFailure", "BlockOneReport",
           "Expectation", "FakeClock", "FenceNeverStopped", "Outcome", "ScriptedModel", "StubOutcome", "ToolTimeout",
           "Turn", "TurnSpec", "WriteThenFail", "answer", "call", "outcome_of", "run_block_one", "run_block_one_many",
           "stub_tools"]
