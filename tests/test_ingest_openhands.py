"""OpenHands event streams: what the stream records of the model that answered, and what it does not."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.ingest.driver import ingest

OPENHANDS = ROOT / "tests" / "fixtures" / "realdata" / "openhands"
STREAMS = sorted(OPENHANDS.glob("*.json"))


@pytest.fixture(scope="module")
def openhands(tmp_path_factory):
    con = store.connect(tmp_path_factory.mktemp("openhands") / "openhands.duckdb")
    ingest(con, [OPENHANDS])
    yield con
    con.close()


def _keys(value, found: set[str]) -> set[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            found.add(k)
            _keys(v, found)
    elif isinstance(value, list):
        for v in value:
            _keys(v, found)
    return found


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.stem)
def test_the_model_is_the_responses_and_the_provider_is_not_recorded(openhands, path):
    """Each response names a bare model (no LiteLLM route such as anthropic/...), and no event carries the LLM
    configuration, a provider or llm_metrics: the model is read, the provider stays unknown, never guessed from a name."""
    events = json.loads(path.read_text(encoding="utf-8"))
    models = [e["tool_call_metadata"]["model_response"]["model"] for e in events
              if (e.get("tool_call_metadata") or {}).get("model_response")]
    assert models and not any("/" in m for m in models)
    keys = _keys(events, set())
    assert not any(word in k.lower() for k in keys for word in ("provider", "llm_config", "llm_metrics", "base_url"))
    got = openhands.execute("select model, provider from runs where run_id = ?", [path.stem]).fetchall()
    assert got == [(max(set(models), key=models.count), None)]
