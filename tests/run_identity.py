"""Pair the oracles' run ids with reconcile's.

The oracles name a mini-swe-agent run after its file (``<stem>``); reconcile adds ``@`` and a digest of the run's
opening, so that two runs saved under one name stay two runs (docs/formats.md). Which digest is reconcile's business:
here each oracle id must meet exactly one of reconcile's ids that starts with ``<stem>@``, and no id may be taken twice.
"""

from __future__ import annotations

DIGESTED = {"mini-swe-agent"}  # folders whose runs reconcile names <stem>@<digest>


def keyed_like_reconcile(truth: dict[str, dict], ids: set[str]) -> dict[str, dict]:
    """truth re-keyed by reconcile's ids; an oracle id without exactly one partner keeps its own (and so fails)."""
    keyed: dict[str, dict] = {}
    for run_id, t in truth.items():
        if t.get("folder") in DIGESTED:
            partners = [i for i in ids if i.startswith(run_id + "@") and "@" not in i[len(run_id) + 1:]]
            run_id = partners[0] if len(partners) == 1 else run_id
        assert run_id not in keyed, f"two oracle runs meet reconcile's {run_id}"
        keyed[run_id] = t
    return keyed
