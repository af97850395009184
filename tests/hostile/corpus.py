"""The hostile corpus: generated cases, each with the exact accounting it must get.

A case is a folder of files (under its own name) and, for each file, what ``reconcile ingest``
must report: ``(status, lines, loaded, rejected, skipped)``, the rejected lines with a fragment of
their reason, and the files passed over with a fragment of why. All cases are ingested together
into one store (each writes its own run ids), so the corpus costs one ingest, not hundreds.

``Case.build`` may do more than write bytes (links, pipes, permissions); a case that cannot be
built here (permissions as root) says so with ``skip``.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import bases
from bases import jsonl, mutated
from reconcile.ingest.files import stored_name

Accounting = tuple[str, int, int, int, int]  # status, lines, loaded, rejected, skipped


@dataclass
class Case:
    id: str
    klass: str
    formats: tuple[str, ...]
    files: dict[str, bytes] = field(default_factory=dict)
    expect: dict[str, Accounting] = field(default_factory=dict)
    rejects: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    passed_over: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # a fragment of a file's first note (why it is unreadable)
    build: Callable[[Path], None] | None = None
    skip: str | None = None


CASES: list[Case] = []


def case(id: str, klass: str, formats: tuple[str, ...] | str, **kwargs) -> Case:
    made = Case(id, klass, (formats,) if isinstance(formats, str) else formats, **kwargs)
    CASES.append(made)
    return made


LOADED_NATIVE = ("loaded", 7, 7, 0, 0)
NATIVE_LINES = 7


def native_bytes(uid: str, change: Callable[[list[dict]], None] | None = None) -> bytes:
    return jsonl(mutated(bases.native(uid), change) if change else bases.native(uid))


def setter(index: int, path: str, value) -> Callable[[list[dict]], None]:
    """Set the dotted ``path`` of line ``index`` (0-based) of a native journal."""
    def change(lines: list[dict]) -> None:
        node = lines[index]
        *parents, last = path.split(".")
        for parent in parents:
            node = node.setdefault(parent, {})
        node[last] = value
    return change


def raw_line_edit(data: bytes, line: int, old: bytes, new: bytes) -> bytes:
    """Replace ``old`` by ``new`` in one line (1-based) of JSON Lines bytes, as raw bytes."""
    lines = data.split(b"\n")
    assert old in lines[line - 1], (old, lines[line - 1])
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return b"\n".join(lines)


# ---------------------------------------------------------------- paths are data
case("glob-brackets", "glob characters in file names", "native",
     files={"bracket[ab].jsonl": native_bytes("g-br1"), "bracketa.jsonl": native_bytes("g-br2")},
     expect={"bracket[ab].jsonl": LOADED_NATIVE, "bracketa.jsonl": LOADED_NATIVE})
case("glob-star", "glob characters in file names", "native",
     files={"sess*.jsonl": native_bytes("g-st1"), "sessA.jsonl": native_bytes("g-st2"), "sessB.jsonl": native_bytes("g-st3")},
     expect={"sess*.jsonl": LOADED_NATIVE, "sessA.jsonl": LOADED_NATIVE, "sessB.jsonl": LOADED_NATIVE})
case("glob-question-cc", "glob characters in file names", "claude_code",
     files={"q?.jsonl": jsonl(bases.claude_code("q?")), "qx.jsonl": jsonl(bases.claude_code("qx"))},
     expect={"q?.jsonl": ("loaded", 4, 4, 0, 0), "qx.jsonl": ("loaded", 4, 4, 0, 0)})
case("glob-star-langfuse", "glob characters in file names", "langfuse",
     files={"trace*.json": json.dumps(bases.langfuse("g-lf1")).encode(),
            "trace1.json": json.dumps(bases.langfuse("g-lf2")).encode()},
     expect={"trace*.json": ("loaded", 4, 4, 0, 0), "trace1.json": ("loaded", 4, 4, 0, 0)})
case("glob-braces-otel", "glob characters in file names", "otel",
     files={"{a,b}.json": json.dumps(bases.otel("g-ot1")).encode(), "a.json": json.dumps(bases.otel("g-ot2")).encode()},
     # issue 58: OTel counts the file's lines (a one-request document is one), not its spans
     expect={"{a,b}.json": ("loaded", 1, 1, 0, 0), "a.json": ("loaded", 1, 1, 0, 0)})
case("glob-swe-openhands", "glob characters in file names", ("swe_agent", "openhands"),
     files={"star*.traj": json.dumps(bases.swe_agent("star*")).encode(),
            "oh[1].json": json.dumps(bases.openhands("oh[1]")).encode(),
            "oh1.json": json.dumps(bases.openhands("oh1-glob")).encode()},
     expect={"star*.traj": ("loaded", 3, 3, 0, 0), "oh[1].json": ("loaded", 4, 2, 0, 2),
             "oh1.json": ("loaded", 4, 2, 0, 2)})
case("glob-provider", "glob characters in file names", "anthropic_usage",
     files={"usage[1]*.csv": bases.anthropic_usage_csv("wk-glob1"), "usage1.csv": bases.anthropic_usage_csv("wk-glob2")},
     expect={"usage[1]*.csv": ("loaded", 2, 2, 0, 0), "usage1.csv": ("loaded", 2, 2, 0, 0)})
case("glob-folder", "glob characters in folder names", "native",
     files={"night[1]*/j.jsonl": native_bytes("g-fo1"), "night1/j.jsonl": native_bytes("g-fo2")},
     expect={"night[1]*/j.jsonl": LOADED_NATIVE, "night1/j.jsonl": LOADED_NATIVE})

ODD_NAMES = {"new\nline.jsonl": "on-nl", "-rf.jsonl": "on-dash", "ünï cødé.jsonl": "on-uni", "it's \"q\".jsonl": "on-q",
             "back\\slash.jsonl": "on-bs", "100%s%n.jsonl": "on-pct", "$(touch pwned).jsonl": "on-sh",
             "🔥.jsonl": "on-emoji", ".hidden.jsonl": "on-dot", ("n" * 200) + ".jsonl": "on-long",
             "tab\tname.jsonl": "on-tab", "semi;colon.jsonl": "on-semi"}
case("odd-names", "odd characters in file names", "native",
     files={name: native_bytes(uid) for name, uid in ODD_NAMES.items()},
     expect={name: LOADED_NATIVE for name in ODD_NAMES})
NFC, NFD = unicodedata.normalize("NFC", "café.jsonl"), unicodedata.normalize("NFD", "café.jsonl")
case("unicode-normalisation", "odd characters in file names", "native",
     files={NFC: native_bytes("nfc"), NFD: native_bytes("nfd")}, expect={NFC: LOADED_NATIVE, NFD: LOADED_NATIVE})
# A name that is not UTF-8 is bytes the store and a terminal cannot take as they are: kept with \xff escapes.
BYTE_NAMES = {os.fsdecode(b"bad\xff\xfe name.jsonl"): "on-bytes", "cr\rname.jsonl": "on-cr", "--help.jsonl": "on-ddash",
              "trailing space .jsonl": "on-trail", "star*?[x].jsonl": "on-globs"}
case("odd-bytes-in-names", "odd characters in file names", "native",
     files={name: native_bytes(uid) for name, uid in BYTE_NAMES.items()},
     expect={stored_name(name): LOADED_NATIVE for name in BYTE_NAMES})

# ---------------------------------------------------------------- line endings and separators
_base = native_bytes("le-crlf")
case("crlf", "line endings", "native", files={"crlf.jsonl": _base.replace(b"\n", b"\r\n")},
     expect={"crlf.jsonl": LOADED_NATIVE})
_lines = native_bytes("le-mixed").split(b"\n")
case("mixed-lf-crlf", "line endings", "native",
     files={"mixed.jsonl": b"\r\n".join(_lines[:3]) + b"\r\n" + b"\n".join(_lines[3:])},
     expect={"mixed.jsonl": LOADED_NATIVE})
case("no-final-newline", "line endings", "native", files={"nonl.jsonl": native_bytes("le-nonl").rstrip(b"\n")},
     expect={"nonl.jsonl": LOADED_NATIVE})
case("bare-cr", "line endings", "native", files={"mac.jsonl": native_bytes("le-cr").replace(b"\n", b"\r")},
     passed_over={"mac.jsonl": "bare CR"})
_lines = native_bytes("le-rawcr").split(b"\n")
case("raw-cr-inside-a-line", "line endings", "native",
     files={"rawcr.jsonl": b"\n".join(_lines[:2] + [_lines[2] + b"\r" + _lines[3]] + _lines[4:])},
     expect={"rawcr.jsonl": ("loaded", 6, 5, 1, 0)}, rejects={"rawcr.jsonl": [(3, "not valid JSON")]})
_lines = native_bytes("le-blank").split(b"\n")
case("blank-lines", "line endings", "native",
     files={"blank.jsonl": b"\n".join(_lines[:3] + [b"", b"   ", b"\t"] + _lines[3:]) + b"\n\n"},
     expect={"blank.jsonl": ("loaded", 12, 7, 0, 5)})
case("utf8-bom", "line endings", ("native", "langfuse", "anthropic_usage"),
     files={"bom.jsonl": b"\xef\xbb\xbf" + native_bytes("le-bom"),
            "bom.trace.json": b"\xef\xbb\xbf" + json.dumps(bases.langfuse("le-bom-lf")).encode(),
            "bom.csv": b"\xef\xbb\xbf" + bases.anthropic_usage_csv("wk-bom")},
     expect={"bom.jsonl": LOADED_NATIVE, "bom.trace.json": ("loaded", 4, 4, 0, 0), "bom.csv": ("loaded", 2, 2, 0, 0)})
case("crlf-other-formats", "line endings", ("claude_code", "anthropic_usage"),
     files={"cc-crlf.jsonl": jsonl(bases.claude_code("cc-crlf")).replace(b"\n", b"\r\n"),
            "crlf.csv": bases.anthropic_usage_csv("wk-crlf").replace(b"\n", b"\r\n")},
     expect={"cc-crlf.jsonl": ("loaded", 4, 4, 0, 0), "crlf.csv": ("loaded", 2, 2, 0, 0)})

SEPARATORS = {"u2028": "\u2028", "u2029": "\u2029", "nel": "\u0085", "vt": "\u000b", "ff": "\u000c",
              "escaped-nul": "\u0000", "rtl-override": "\u202e"}
case("separators-in-strings", "Unicode separators inside strings", ("native", "claude_code"),
     files={**{f"{name}.jsonl": native_bytes(f"sep-{name}", setter(2, "result_preview", f"a{char}b"))
               for name, char in SEPARATORS.items()},
            "cc-u2028.jsonl": jsonl(mutated(bases.claude_code("cc-u2028"),
                                            lambda L: L[0]["message"].__setitem__("content", "line\u2028sep")))},
     expect={**{f"{name}.jsonl": LOADED_NATIVE for name in SEPARATORS}, "cc-u2028.jsonl": ("loaded", 4, 4, 0, 0)})
_nul = raw_line_edit(native_bytes("sep-rawnul"), 3, b'"result_preview":"', b'"result_preview":"\x00')
_tab = raw_line_edit(native_bytes("sep-rawtab"), 3, b'"result_preview":"', b'"result_preview":"\t')
case("raw-control-characters", "Unicode separators inside strings", "native",
     files={"rawnul.jsonl": _nul, "rawtab.jsonl": _tab},
     expect={"rawnul.jsonl": ("loaded", 7, 6, 1, 0), "rawtab.jsonl": ("loaded", 7, 6, 1, 0)},
     rejects={"rawnul.jsonl": [(3, "not valid JSON")], "rawtab.jsonl": [(3, "not valid JSON")]})

# ---------------------------------------------------------------- numbers at and beyond every limit
LIMIT_CASES = [  # (name, line index, field, value, accepted)
    ("tok-zero", 1, "usage.output", 0, True), ("tok-1e15", 1, "usage.output", 10**15, True),
    ("tok-1e15p1", 1, "usage.output", 10**15 + 1, False), ("tok-2p53", 1, "usage.output", 2**53, False),
    ("tok-2p63m1", 1, "usage.output", 2**63 - 1, False), ("tok-2p63", 1, "usage.output", 2**63, False),
    ("tok-2p64", 1, "usage.output", 2**64, False), ("tok-2p64p1", 1, "usage.output", 2**64 + 1, False),
    ("tok-neg", 1, "usage.output", -1, False), ("tok-frac", 1, "usage.output", 1.5, False),
    ("tok-1e308", 1, "usage.output", 1e308, False), ("tok-string", 1, "usage.output", "12", False),
    ("tok-bool", 1, "usage.output", True, False), ("tok-null", 1, "usage.output", None, True),
    ("idx-2p31m1", 2, "idx", 2**31 - 1, True), ("idx-2p31", 2, "idx", 2**31, False),
    ("idx-3e9", 2, "idx", 3_000_000_000, False), ("idx-float", 2, "idx", 3e9, False),
    ("ms-1e12", 1, "ms", 10**12, True), ("ms-over", 1, "ms", 10**12 + 1, False), ("ms-neg", 1, "ms", -1, False),
    ("ms-1e308", 1, "ms", 1e308, False), ("ms-half", 1, "ms", 0.5, True),
    ("context-2p63", 1, "context_tokens", 2**63, False), ("attempt-2p31", 1, "attempt", 2**31, False),
    ("cost-2p63", 1, "cost_micros", 2**63, False), ("result-bytes-neg", 2, "result_bytes", -5, False),
    ("ledger-cost-2p63", 6, "ledger.cost_micros", 2**63, False), ("ledger-steps-2p31", 6, "ledger.steps", 2**31, False),
]
for name, index, path, value, accepted in LIMIT_CASES:
    case(f"limit-{name}", "numbers at and beyond type limits", "native",
         files={f"{name}.jsonl": native_bytes(f"lim-{name}", setter(index, path, value))},
         expect={f"{name}.jsonl": LOADED_NATIVE if accepted else ("loaded", 7, 6, 1, 0)},
         rejects={} if accepted else {f"{name}.jsonl": [(index + 1, f'field "{path}" is ')]})
RUN_LIMITS = [("max-steps-2p31", "limits.max_steps", 2**31), ("max-tokens-2p63", "limits.max_tokens", 2**63),
              ("max-wall-1e300", "limits.max_wall_seconds", 1e300), ("timeout-neg", "limits.tool_timeout_seconds", -1),
              ("catalogue-2p31", "catalogue_tokens", 2**31)]
for name, path, value in RUN_LIMITS:  # a bad run_start: the run has no start, so every line of it is rejected
    case(f"limit-{name}", "numbers at and beyond type limits", "native",
         files={f"{name}.jsonl": native_bytes(f"lim-{name}", setter(0, path, value))},
         expect={f"{name}.jsonl": ("loaded", 7, 0, 7, 0)},
         rejects={f"{name}.jsonl": [(1, f'field "{path}" is ')] + [(n, "no run_start line") for n in range(2, 8)]})
case("limit-tool-catalogue-item", "numbers at and beyond type limits", "native",
     files={"schema.jsonl": native_bytes("lim-schema", setter(0, "tools", [{"name": "x", "schema_tokens": 2**40}])),
            "notobject.jsonl": native_bytes("lim-tool-item", setter(0, "tools", ["read_file"])),
            "callid.jsonl": native_bytes("lim-call-id", setter(1, "tool_calls", [{"call_id": 5, "name": "x"}]))},
     expect={"schema.jsonl": ("loaded", 7, 0, 7, 0), "notobject.jsonl": ("loaded", 7, 0, 7, 0),
             "callid.jsonl": ("loaded", 7, 6, 1, 0)},
     rejects={"schema.jsonl": [(1, 'field "tools[1].schema_tokens" is 1099511627776')]
                              + [(n, "no run_start line") for n in range(2, 8)],
              "notobject.jsonl": [(1, 'field "tools[1]" is "read_file"; expected an object')]
                                 + [(n, "no run_start line") for n in range(2, 8)],
              "callid.jsonl": [(2, 'field "tool_calls[1].call_id" is 5; expected a string')]})


def _lf(uid: str, change) -> bytes:
    return json.dumps(mutated(bases.langfuse(uid), change)).encode()


def _lf_usage(value):
    return lambda d: d["observations"][0]["usageDetails"].__setitem__("input", value)


case("limits-langfuse", "numbers at and beyond type limits", "langfuse",
     files={"lf-2p63.json": _lf("lfl-2p63", _lf_usage(2**63)), "lf-1e308.json": _lf("lfl-1e308", _lf_usage(1e308)),
            "lf-neg.json": _lf("lfl-neg", _lf_usage(-5)), "lf-frac.json": _lf("lfl-frac", _lf_usage(1.5)),
            "lf-cost.json": _lf("lfl-cost", lambda d: d["observations"][0]["costDetails"].__setitem__("total", 1e300)),
            "lf-ok.json": _lf("lfl-ok", _lf_usage(10**12))},
     expect={**{name: ("loaded", 4, 3, 1, 0) for name in ("lf-2p63.json", "lf-1e308.json", "lf-neg.json",
                                                          "lf-frac.json", "lf-cost.json")},
             "lf-ok.json": ("loaded", 4, 4, 0, 0)},
     rejects={"lf-2p63.json": [(2, 'field "context_tokens" is 9.223372036854776e+18')],
              "lf-1e308.json": [(2, 'field "context_tokens" is ')], "lf-neg.json": [(2, '"usageDetails" "input" is -5')],
              "lf-frac.json": [(2, 'field "context_tokens" is 1.5')],
              "lf-cost.json": [(2, 'field "harness_cost_micros" is ')]})


def _oh(uid: str, change) -> bytes:
    return json.dumps(mutated(bases.openhands(uid), change)).encode()


def _oh_usage(key, value):
    return lambda d: d[1]["tool_call_metadata"]["model_response"]["usage"].__setitem__(key, value)


case("limits-openhands", "numbers at and beyond type limits", "openhands",
     files={"oh-2p63.json": _oh("ohl-2p63", _oh_usage("prompt_tokens", 2**63)),
            "oh-1e400.json": _oh("ohl-1e400", _oh_usage("completion_tokens", 1e308 * 10 if False else 1e308)),
            "oh-cost.json": _oh("ohl-cost", lambda d: d[1]["llm_metrics"].__setitem__("accumulated_cost", 1e308))},
     # the model step's record is rejected; the tool observation still loads (its asker is unknown);
     # a run-level value (the harness's accumulated cost) rejects every loaded record of the run
     expect={"oh-2p63.json": ("loaded", 4, 1, 1, 2), "oh-1e400.json": ("loaded", 4, 1, 1, 2),
             "oh-cost.json": ("loaded", 4, 0, 2, 2)},
     rejects={"oh-2p63.json": [(2, 'field "context_tokens" is ')], "oh-1e400.json": [(2, 'field "output_tokens" is ')],
              "oh-cost.json": [(2, 'field "ledger_cost_micros" is '), (3, 'field "ledger_cost_micros" is ')]})


def _swe(uid: str, change) -> bytes:
    return json.dumps(mutated(bases.swe_agent(uid), change)).encode()


case("limits-swe-agent", "numbers at and beyond type limits", "swe_agent",
     files={"swe-time.traj": _swe("swel-time", lambda d: d["trajectory"][0].__setitem__("execution_time", 1e308)),
            "swe-tokens.traj": _swe("swel-tok", lambda d: d["info"]["model_stats"].__setitem__("tokens_sent", 2**63)),
            "swe-cost.traj": _swe("swel-cost", lambda d: d["info"]["model_stats"].__setitem__("instance_cost", 1e300)),
            "swe-neg.traj": _swe("swel-neg", lambda d: d["trajectory"][1].__setitem__("execution_time", -2))},
     expect={"swe-time.traj": ("loaded", 3, 2, 1, 0), "swe-tokens.traj": ("loaded", 3, 0, 3, 0),
             "swe-cost.traj": ("loaded", 3, 0, 3, 0), "swe-neg.traj": ("loaded", 3, 3, 0, 0)},
     rejects={"swe-time.traj": [(1, 'field "ms" is ')],
              "swe-tokens.traj": [(n, 'field "ledger_input_tokens" is ') for n in (1, 2, 3)],
              "swe-cost.traj": [(n, 'field "ledger_cost_micros" is ') for n in (1, 2, 3)]})


def _ot(uid: str, change) -> bytes:
    return json.dumps(mutated(bases.otel(uid), change)).encode()


def _ot_span(n, key, value):
    return lambda d: d["resourceSpans"][0]["scopeSpans"][0]["spans"][n].__setitem__(key, value)


def _ot_attr(n, key, value):
    def change(d):
        attrs = d["resourceSpans"][0]["scopeSpans"][0]["spans"][n]["attributes"]
        attrs[:] = [a for a in attrs if a["key"] != key] + [{"key": key, "value": value}]
    return change


case("limits-otel", "numbers at and beyond type limits", "otel",
     files={"ot-2p63.json": _ot("otl-2p63", _ot_attr(1, "gen_ai.usage.input_tokens", {"intValue": str(2**63)})),
            "ot-double.json": _ot("otl-dbl", _ot_attr(1, "gen_ai.usage.output_tokens", {"doubleValue": 1e308})),
            "ot-start.json": _ot("otl-start", _ot_span(1, "startTimeUnixNano", "1e30")),
            "ot-end.json": _ot("otl-end", _ot_span(2, "endTimeUnixNano", "soon")),
            "ot-1970.json": _ot("otl-1970", _ot_span(1, "startTimeUnixNano", "0")),
            "ot-backwards.json": _ot("otl-back", _ot_span(2, "endTimeUnixNano", "1795906800000000000"))},
     # issue 58: OTel counts the file's lines, not its spans, and loads a line (and a run) whole or not at all: one bad
     # span rejects the one-line document, where it used to drop that span and load the rest of the run
     expect={"ot-2p63.json": ("loaded", 1, 0, 1, 0), "ot-double.json": ("loaded", 1, 0, 1, 0),
             "ot-start.json": ("loaded", 1, 0, 1, 0), "ot-end.json": ("loaded", 1, 0, 1, 0),
             "ot-1970.json": ("loaded", 1, 0, 1, 0), "ot-backwards.json": ("loaded", 1, 1, 0, 0)},
     rejects={"ot-2p63.json": [(1, 'field "context_tokens" is ')], "ot-double.json": [(1, 'field "output_tokens" is ')],
              "ot-start.json": [(1, 'startTimeUnixNano is "1e30"')], "ot-end.json": [(1, 'endTimeUnixNano is "soon"')],
              "ot-1970.json": [(1, 'field "started_at" is 1970-01-01')]})


def _cc(uid: str, change) -> bytes:
    return jsonl(mutated(bases.claude_code(uid), change))


case("limits-claude-code", "numbers at and beyond type limits", "claude_code",
     files={"ccl-2p63.jsonl": _cc("ccl-2p63", lambda L: L[1]["message"]["usage"].__setitem__("output_tokens", 2**63)),
            "ccl-neg.jsonl": _cc("ccl-neg", lambda L: L[3]["message"]["usage"].__setitem__("input_tokens", -3)),
            "ccl-pre.jsonl": _cc("ccl-pre", lambda L: L.append({"type": "system", "subtype": "compact_boundary",
                                                                 "sessionId": "ccl-pre", "timestamp": bases.TS.format(5),
                                                                 "compactMetadata": {"preTokens": 1e308}}))},
     expect={"ccl-2p63.jsonl": ("loaded", 4, 3, 1, 0), "ccl-neg.jsonl": ("loaded", 4, 3, 1, 0),
             "ccl-pre.jsonl": ("loaded", 5, 4, 1, 0)},
     rejects={"ccl-2p63.jsonl": [(2, 'field "message.usage.output_tokens" is 9223372036854775808')],
              "ccl-neg.jsonl": [(4, 'field "message.usage.input_tokens" is -3')],
              "ccl-pre.jsonl": [(5, 'field "compactMetadata.preTokens" is 1e308')]})


def _count(n, key, value):
    """Set a token count of the n-th line's cumulative usage (a Codex token_count)."""
    return lambda L: L[n]["payload"]["info"]["total_token_usage"].__setitem__(key, value)


case("limits-codex", "numbers at and beyond type limits", "codex",
     files={"cx-ok.jsonl": jsonl(bases.codex("cx-ok")),
            "cx-neg.jsonl": jsonl(mutated(bases.codex("cx-neg"), _count(3, "input_tokens", -3))),
            "cx-2p63.jsonl": jsonl(mutated(bases.codex("cx-2p63"), _count(7, "output_tokens", 2**63)))},
     # with line 4's count rejected, line 6's (the same totals) is no longer a repeat: it is the request's count
     expect={"cx-ok.jsonl": ("loaded", 8, 7, 0, 1), "cx-neg.jsonl": ("loaded", 8, 7, 1, 0),
             "cx-2p63.jsonl": ("loaded", 8, 6, 1, 1)},
     rejects={"cx-neg.jsonl": [(4, 'field "payload.info.total_token_usage.input_tokens" is -3')],
              "cx-2p63.jsonl": [(8, 'field "payload.info.total_token_usage.output_tokens" is 9223372036854775808')]})

case("limits-gemini", "numbers at and beyond type limits", ("gemini_cli", "gemini_cli_jsonl"),
     files={"gm-neg.jsonl": jsonl(mutated(bases.gemini_jsonl("gm-neg"), lambda L: L[2]["tokens"].__setitem__("input", -1))),
            "gm-dup.jsonl": jsonl([*bases.gemini_jsonl("gm-dup"), bases.gemini_jsonl("gm-dup")[2]]),
            "gm-big.json": json.dumps(mutated(bases.gemini_chat("gm-big"),
                                              lambda d: d["messages"][1]["tokens"].__setitem__("output", 1e300))).encode()},
     expect={"gm-neg.jsonl": ("loaded", 4, 2, 1, 1), "gm-dup.jsonl": ("loaded", 5, 3, 0, 2),
             "gm-big.json": ("loaded", 2, 1, 1, 0)},
     rejects={"gm-neg.jsonl": [(3, 'field "tokens.input" is -1')], "gm-big.json": [(2, 'field "output_tokens" is ')]})

case("limits-inspect-and-mini", "numbers at and beyond type limits", ("inspect_ai", "mini_swe_agent"),
     files={"ia-neg.json": json.dumps(mutated(bases.inspect_log("ia-neg"), lambda d: d["samples"][0]["events"][0]["output"]
                                              ["usage"].__setitem__("output_tokens", -4))).encode(),
            "ms-neg.traj.json": json.dumps(mutated(bases.mini_swe_agent("ms-neg"), lambda d: d["messages"][2]["extra"]
                                                   ["response"]["usage"].__setitem__("prompt_tokens", 10))).encode()},
     expect={"ia-neg.json": ("loaded", 1, 0, 1, 0), "ms-neg.traj.json": ("loaded", 4, 0, 1, 3)},
     rejects={"ia-neg.json": [(1, 'field "output_tokens" is -4')], "ms-neg.traj.json": [(3, 'field "input_uncached" is -10')]})


def _usage_csv(uid: str, old: str, new: str) -> bytes:
    data = bases.anthropic_usage_csv(uid).decode()
    first, second, third = data.splitlines(keepends=True)
    return (first + second.replace(old, new, 1) + third).encode()


case("limits-provider", "numbers at and beyond type limits", "anthropic_usage",
     files={"pv-2p63.csv": _usage_csv("wk-2p63", ",5\n", f",{2**63}\n"), "pv-neg.csv": _usage_csv("wk-neg", ",100,", ",-100,"),
            "pv-1999.csv": _usage_csv("wk-1999", "2026-11-28T22:00:00Z", "1999-11-28T22:00:00Z"),
            "pv-junk.csv": _usage_csv("wk-junk", ",5\n", ",lots\n")},
     expect={name: ("loaded", 2, 1, 1, 0) for name in ("pv-2p63.csv", "pv-neg.csv", "pv-1999.csv", "pv-junk.csv")},
     rejects={"pv-2p63.csv": [(1, '"output_tokens" is 9.223372036854776e+18')],
              "pv-neg.csv": [(1, '"input_uncached" is -100')], "pv-1999.csv": [(1, "bucket_start is 1999-11-28")],
              "pv-junk.csv": [(1, '"output_tokens" is not a number')]})

# ---------------------------------------------------------------- timestamps
TIMESTAMP_CASES = [("year-5-digits", "12026-11-28T23:00:02Z", False), ("year-negative", "-2026-11-28T23:00:02Z", False),
                   ("infinity", "infinity", False), ("minus-infinity", "-infinity", False), ("epoch", "epoch", False),
                   ("1999", "1999-12-31T23:59:59Z", False), ("2100", "2100-01-01T00:00:00Z", False),
                   ("2099", "2099-12-31T23:59:59Z", True), ("no-zone", "2026-11-28T23:00:02", True),
                   ("offset", "2026-11-29T01:00:02+02:00", True), ("now", "now", False), ("today", "today", False),
                   ("leap-second", "2026-12-31T23:59:60Z", False), ("feb-30", "2026-02-30T00:00:00Z", False),
                   ("unix-number", 1795906802, False), ("empty", "", False), ("offset-25h", "2026-11-28T23:00:02+25:00", False),
                   ("nanoseconds", "2026-11-28T23:00:02.123456789Z", True)]
for name, value, accepted in TIMESTAMP_CASES:
    case(f"ts-{name}", "timestamp oddities", "native",
         files={f"ts-{name}.jsonl": native_bytes(f"ts-{name}", setter(1, "ts", value))},
         expect={f"ts-{name}.jsonl": LOADED_NATIVE if accepted else ("loaded", 7, 6, 1, 0)},
         rejects={} if accepted else {f"ts-{name}.jsonl": [(2, 'field "ts" is ')]})
case("ts-run-start", "timestamp oddities", "native",
     files={"ts-start.jsonl": native_bytes("ts-start", setter(0, "ts", "infinity"))},
     expect={"ts-start.jsonl": ("loaded", 7, 0, 7, 0)},
     rejects={"ts-start.jsonl": [(1, 'field "ts" is "infinity"')] + [(n, "no run_start line") for n in range(2, 8)]})
case("ts-documents", "timestamp oddities", ("langfuse", "openhands", "claude_code"),
     files={"lf-inf.json": _lf("tsd-lf-inf", lambda d: d["observations"][1].__setitem__("startTime", "infinity")),
            "lf-trace.json": _lf("tsd-lf-trace", lambda d: d["trace"].__setitem__("timestamp", "12026-01-01T00:00:00Z")),
            "oh-epoch.json": _oh("tsd-oh", lambda d: d[2].__setitem__("timestamp", "epoch")),
            "cc-inf.jsonl": _cc("tsd-cc", lambda L: L[2].__setitem__("timestamp", "infinity"))},
     expect={"lf-inf.json": ("loaded", 4, 3, 1, 0), "lf-trace.json": ("loaded", 4, 3, 1, 0),
             "oh-epoch.json": ("loaded", 4, 1, 1, 2), "cc-inf.jsonl": ("loaded", 4, 3, 1, 0)},
     rejects={"lf-inf.json": [(3, '"startTime" is infinity')],
              "lf-trace.json": [(1, 'trace "timestamp" is 12026-01-01T00:00:00Z')],
              "oh-epoch.json": [(3, '"timestamp" is epoch')], "cc-inf.jsonl": [(3, 'field "timestamp" is "infinity"')]})

# ---------------------------------------------------------------- compression
_journal = native_bytes("gz-ok")
case("gzip", "truncated and fake compression", ("native", "claude_code", "langfuse"),
     files={"ok.jsonl.gz": gzip.compress(_journal, mtime=0),
            "members.jsonl.gz": gzip.compress(native_bytes("gz-m")[:400], mtime=0)
                                + gzip.compress(native_bytes("gz-m")[400:], mtime=0),
            "cc.jsonl.gz": gzip.compress(jsonl(bases.claude_code("gz-cc")), mtime=0),
            "lf.json.gz": gzip.compress(json.dumps(bases.langfuse("gz-lf")).encode(), mtime=0),
            "plain-named.jsonl.gz": native_bytes("gz-plain"),
            "truncated.jsonl.gz": gzip.compress(native_bytes("gz-cut"), mtime=0)[:200],
            "fake.jsonl.gz": b"\x1f\x8b" + b"not really gzip at all" * 10,
            "empty.jsonl.gz": b"", "gz-of-binary.gz": gzip.compress(bytes(range(256)) * 8, mtime=0)},
     expect={"ok.jsonl.gz": LOADED_NATIVE, "members.jsonl.gz": LOADED_NATIVE, "cc.jsonl.gz": ("loaded", 4, 4, 0, 0),
             "lf.json.gz": ("loaded", 4, 4, 0, 0), "plain-named.jsonl.gz": LOADED_NATIVE,
             "truncated.jsonl.gz": ("unreadable", 0, 0, 0, 0), "fake.jsonl.gz": ("unreadable", 0, 0, 0, 0)},
     notes={"truncated.jsonl.gz": "the gzip stream ends early", "fake.jsonl.gz": "not a valid gzip stream"},
     passed_over={"empty.jsonl.gz": "an empty file", "gz-of-binary.gz": "binary data"})

# ---------------------------------------------------------------- what is not a regular file
def _specials(folder: Path) -> None:
    os.mkfifo(folder / "pipe.jsonl")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(folder / "sock.jsonl"))
    finally:
        server.close()
    (folder / "folder.jsonl").mkdir()
    os.symlink("/dev/null", folder / "devnull.jsonl")


case("not-regular-files", "pipes, sockets, devices and folders named like files", "native",
     build=_specials, files={"real.jsonl": native_bytes("special-real")}, expect={"real.jsonl": LOADED_NATIVE},
     passed_over={"pipe.jsonl": "not a regular file", "sock.jsonl": "not a regular file",
                  "devnull.jsonl": "not a regular file"})


def _links(folder: Path) -> None:
    os.symlink("self.jsonl", folder / "self.jsonl")
    os.symlink("b.jsonl", folder / "a.jsonl")
    os.symlink("a.jsonl", folder / "b.jsonl")
    os.symlink("nowhere.jsonl", folder / "broken.jsonl")
    os.symlink("..", folder / "up")
    os.symlink("real.jsonl", folder / "alias.jsonl")


case("symlinks", "symlink loops and broken links", "native",
     build=_links, files={"real.jsonl": native_bytes("link-real")}, expect={"real.jsonl": LOADED_NATIVE},
     passed_over={"self.jsonl": "leads nowhere", "a.jsonl": "leads nowhere", "b.jsonl": "leads nowhere",
                  "broken.jsonl": "leads nowhere", "up": "a link to a folder, not followed"})


def _locked(folder: Path) -> None:
    os.chmod(folder / "locked.jsonl", 0)
    (folder / "closed").mkdir()
    (folder / "closed" / "inside.jsonl").write_bytes(native_bytes("perm-inside"))
    os.chmod(folder / "closed", 0)


case("permissions", "files and folders without read permission", "native",
     build=_locked, files={"locked.jsonl": native_bytes("perm-locked"), "open.jsonl": native_bytes("perm-open")},
     expect={"locked.jsonl": ("unreadable", 0, 0, 0, 0), "open.jsonl": LOADED_NATIVE},
     notes={"locked.jsonl": "Permission denied"},
     passed_over={"closed": "cannot read the folder"},
     skip="root reads every file whatever its mode" if os.geteuid() == 0 else None)

# ---------------------------------------------------------------- nesting, size, count
DEEP = "[" * 10_000 + "]" * 10_000
case("deep-nesting", "deep nesting", ("native", "langfuse"),
     files={"deep-args.jsonl": raw_line_edit(native_bytes("deep-args"), 2, b'"lines":[1,2.0]', f'"lines":{DEEP}'.encode()),
            "deep-line.jsonl": native_bytes("deep-line") + DEEP.encode() + b"\n",
            "deep.trace.json": json.dumps(bases.langfuse("deep-lf")).encode().replace(b'"input": {"q": "x"}',
                                                                                     f'"input": {DEEP}'.encode())},
     expect={"deep-args.jsonl": ("loaded", 7, 6, 1, 0), "deep-line.jsonl": ("loaded", 8, 7, 1, 0),
             "deep.trace.json": ("loaded", 4, 3, 1, 0)},
     rejects={"deep-args.jsonl": [(2, "tool arguments nested 10001 levels deep")],
              "deep-line.jsonl": [(8, "expected a JSON object, got array")],
              "deep.trace.json": [(3, "tool arguments nested 10000 levels deep")]})
case("huge-line", "huge lines", "native",
     files={"huge.jsonl": native_bytes("huge", setter(2, "result_preview", "x" * 20_000_000))},
     expect={"huge.jsonl": LOADED_NATIVE})
case("wide-arguments", "huge lines", "native",
     files={"wide.jsonl": native_bytes("wide", lambda L: L[1]["tool_calls"][0].__setitem__("args", {"items": list(range(50_000))}))},
     expect={"wide.jsonl": LOADED_NATIVE})
MANY = 600
case("many-small-files", "many small files", "native",
     files={f"many/{n:04d}.jsonl": native_bytes(f"many-{n}") for n in range(MANY)},
     expect={f"many/{n:04d}.jsonl": LOADED_NATIVE for n in range(MANY)})

# ---------------------------------------------------------------- empty, binary, encodings
case("empty-files", "empty and whitespace-only files", "native",
     files={"empty.jsonl": b"", "newlines.jsonl": b"\n\n\n", "spaces.jsonl": b"   \t  \n"},
     passed_over={"empty.jsonl": "an empty file", "newlines.jsonl": "an empty file", "spaces.jsonl": "an empty file"})
case("encodings", "invalid UTF-8 and other encodings", "native",
     files={"badbyte.jsonl": raw_line_edit(native_bytes("enc-bad"), 3, b'"result_preview":"', b'"result_preview":"\xff\xfe'),
            "latin1.jsonl": native_bytes("enc-latin", setter(2, "result_preview", "caf\u00e9")).replace("caf\u00e9".encode(), b"caf\xe9"),
            "utf16.jsonl": native_bytes("enc-16").decode().encode("utf-16"), "binary.jsonl": bytes(range(256)) * 4},
     expect={"badbyte.jsonl": ("loaded", 7, 6, 1, 0), "latin1.jsonl": ("loaded", 7, 6, 1, 0)},
     rejects={"badbyte.jsonl": [(3, "not valid UTF-8")], "latin1.jsonl": [(3, "not valid UTF-8")]},
     passed_over={"utf16.jsonl": "binary data", "binary.jsonl": "binary data"})

def _archives(folder: Path) -> None:
    import bz2
    import lzma
    import zipfile

    journal = native_bytes("arch")
    with zipfile.ZipFile(folder / "night.zip", "w") as archive:
        archive.writestr("j.jsonl", journal)
    (folder / "night.jsonl.bz2").write_bytes(bz2.compress(journal))
    (folder / "night.jsonl.xz").write_bytes(lzma.compress(journal))
    from reconcile import store as reconcile_store

    reconcile_store.connect(folder / "store.duckdb").close()


case("archives-and-stores", "archives and stores in the folder", "native",
     build=_archives,
     passed_over={"night.zip": "a zip archive", "night.jsonl.bz2": "a bzip2 archive", "night.jsonl.xz": "a xz archive",
                  "store.duckdb": "a DuckDB database"})
_mixed = native_bytes("mixed-fmt").split(b"\n")
case("foreign-lines", "lines of another format inside a file", ("native", "claude_code"),
     files={"mixed.jsonl": b"\n".join(_mixed[:3] + [jsonl(bases.claude_code("mixed-cc"))[:-1].split(b"\n")[0]] + _mixed[3:]),
            "cc-with-native.jsonl": jsonl(bases.claude_code("cc-native") + bases.native("in-cc")[:1])},
     expect={"mixed.jsonl": ("loaded", 8, 7, 1, 0), "cc-with-native.jsonl": ("loaded", 5, 4, 0, 1)},
     rejects={"mixed.jsonl": [(4, 'missing field "v" on a user line')]})
_odd_ids = ["\u200bzero-width", "\u202eright-to-left", "emoji-\U0001F525", "space id", "slash/id", "quote'id", "-dash"]
case("odd-run-ids", "odd characters in run ids", "native",
     files={f"id-{n}.jsonl": native_bytes(run_id) for n, run_id in enumerate(_odd_ids)},
     expect={f"id-{n}.jsonl": LOADED_NATIVE for n in range(len(_odd_ids))})

# ---------------------------------------------------------------- repeats and types
_lines = native_bytes("dup").split(b"\n")
case("duplicates", "repeated and conflicting lines", "native",
     files={"repeat.jsonl": b"\n".join(_lines[:3] + [_lines[2]] + _lines[3:]),
            "conflict.jsonl": native_bytes("dup-c") + json.dumps({**bases.native("dup-c")[2], "ms": 99}).encode() + b"\n",
            "copy-a.jsonl": native_bytes("dup-copy"), "copy-b.jsonl": native_bytes("dup-copy")},
     expect={"repeat.jsonl": ("loaded", 8, 7, 0, 1), "conflict.jsonl": ("loaded", 8, 7, 1, 0),
             "copy-a.jsonl": LOADED_NATIVE, "copy-b.jsonl": ("loaded", 7, 0, 0, 7)},
     rejects={"conflict.jsonl": [(8, "conflicts with line 3")]})
WRONG_TYPES = [("usage-array", 1, "usage", [1, 2]), ("idx-string", 2, "idx", "7"), ("run-id-number", 2, "run_id", 5),
               ("calls-object", 1, "tool_calls", {"a": 1}), ("ts-object", 2, "ts", {"at": "now"}),
               ("final-string", 5, "final", "yes"), ("kind-null", 2, "kind", None)]
for name, index, path, value in WRONG_TYPES:
    case(f"type-{name}", "wrong JSON types", "native",
         files={f"{name}.jsonl": native_bytes(f"type-{name}", setter(index, path, value))},
         expect={f"{name}.jsonl": ("loaded", 7, 6, 1, 0)}, rejects={f"{name}.jsonl": [(index + 1, f'"{path}"')]})
JSON_ODDITIES = [("leading-zero", b'"ms":900,', b'"ms":0900,'), ("trailing-comma", b'"final":false', b'"final":false,'),
                 ("single-quotes", b'"kind":"model"', b"'kind':'model'"), ("comment", b'{"v":1', b'/* c */{"v":1')]
for name, old, new in JSON_ODDITIES:
    case(f"json-{name}", "JSON that is not quite JSON", "native",
         files={f"{name}.jsonl": raw_line_edit(native_bytes(f"json-{name}"), 2, old, new)},
         expect={f"{name}.jsonl": ("loaded", 7, 6, 1, 0)}, rejects={f"{name}.jsonl": [(2, "not valid JSON")]})
# DuckDB's parser reads NaN and Infinity; strict JSON has neither, so the line is not JSON (issue 27).
for name, literal in (("nan", b"NaN"), ("infinity", b"Infinity")):
    case(f"json-{name}", "JSON that is not quite JSON", "native",
         files={f"{name}.jsonl": raw_line_edit(native_bytes(f"json-{name}"), 2, b'"ms":900,', b'"ms":' + literal + b",")},
         expect={f"{name}.jsonl": ("loaded", 7, 6, 1, 0)},
         rejects={f"{name}.jsonl": [(2, f"not valid JSON: {literal.decode()} is not a JSON number")]})
case("json-duplicate-keys", "JSON that is not quite JSON", "native",
     files={"dupkeys.jsonl": raw_line_edit(native_bytes("json-dupkey"), 2, b'"kind":"model"', b'"kind":"model","kind":"model"')},
     expect={"dupkeys.jsonl": LOADED_NATIVE})

# ---------------------------------------------------------------- Claude Code content shapes
def _cc_content(n, value):
    return lambda L: L[n]["message"].__setitem__("content", value)


CC_CONTENT = {"string-assistant": _cc_content(3, "Two files, as a plain string."), "number": _cc_content(3, 5),
              "object": _cc_content(3, {"junk": True}), "null": _cc_content(0, None),
              "items-not-objects": _cc_content(3, ["a", 5, None, [1]]),
              "result-content-object": lambda L: L[2]["message"]["content"][0].__setitem__("content", {"x": 1}),
              "block-type-number": lambda L: L[1]["message"]["content"][0].__setitem__("type", 7)}
case("claude-code-content", "Claude Code content shapes", "claude_code",
     files={f"ccc-{name}.jsonl": _cc(f"ccc-{name}", change) for name, change in CC_CONTENT.items()},
     expect={f"ccc-{name}.jsonl": ("loaded", 4, 4, 0, 0) for name in CC_CONTENT})
case("claude-code-is-error", "Claude Code content shapes", "claude_code",
     files={"ccc-is-error.jsonl": _cc("ccc-is-error", lambda L: L[2]["message"]["content"][0].__setitem__("is_error", "yes"))},
     expect={"ccc-is-error.jsonl": ("loaded", 4, 3, 1, 0)},
     rejects={"ccc-is-error.jsonl": [(3, '"is_error" is "yes"')]})

# ---------------------------------------------------------------- document structure
case("document-structure", "malformed document structure", ("langfuse", "openhands", "swe_agent", "otel"),
     files={"lf-item-number.json": _lf("ds-lf", lambda d: d["observations"].append(5)),
            "lf-no-observations.json": _lf("ds-lf-empty", lambda d: d.__setitem__("observations", [])),
            "oh-item-string.json": _oh("ds-oh", lambda d: d.insert(1, "an event")),
            "swe-entry-string.traj": _swe("ds-swe", lambda d: d["trajectory"].insert(1, "entry")),
            "swe-history-string.traj": _swe("ds-swe-h", lambda d: d.__setitem__("history", "none")),
            "ot-scope-object.json": _ot("ds-ot", lambda d: d["resourceSpans"][0].__setitem__("scopeSpans", {"x": 1})),
            "ot-dup-attrs.json": _ot("ds-ot-dup", lambda d: d["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["attributes"]
                                     .extend([bases._attr("gen_ai.usage.input_tokens", 999), {"value": {"intValue": "1"}}]))},
     expect={"lf-item-number.json": ("loaded", 5, 4, 1, 0), "lf-no-observations.json": ("loaded", 1, 1, 0, 0),
             "oh-item-string.json": ("loaded", 5, 2, 1, 2), "swe-entry-string.traj": ("loaded", 4, 3, 1, 0),
             "swe-history-string.traj": ("loaded", 3, 3, 0, 0), "ot-scope-object.json": ("loaded", 1, 0, 1, 0),
             "ot-dup-attrs.json": ("loaded", 1, 1, 0, 0)},  # issue 58: OTel counts lines, not spans
     rejects={"lf-item-number.json": [(5, 'observation has no "id"')], "oh-item-string.json": [(2, 'has no integer "id"')],
              "swe-entry-string.traj": [(2, 'neither "action" nor "response"')],
              "ot-scope-object.json": [(1, "scopeSpans or spans that is not an array")]})
_oh_doc = json.dumps(bases.openhands("cut-oh")).encode()
case("truncated-documents", "truncated documents", ("langfuse", "openhands", "swe_agent"),
     files={"cut.trace.json": json.dumps(bases.langfuse("cut-lf")).encode()[:300], "cut-oh.json": _oh_doc[: len(_oh_doc) // 2],
            "cut.traj": json.dumps(bases.swe_agent("cut-swe")).encode()[:250]},
     expect={"cut.trace.json": ("loaded", 1, 0, 1, 0), "cut-oh.json": ("loaded", 1, 0, 1, 0),
             "cut.traj": ("loaded", 1, 0, 1, 0)},
     rejects={name: [(1, "not valid JSON")] for name in ("cut.trace.json", "cut-oh.json", "cut.traj")})

# ---------------------------------------------------------------- provider exports
_page = bases.anthropic_usage_json("wk-dup")
_broken_copy = mutated(_page, lambda d: d["data"][0]["results"].append({**d["data"][0]["results"][0], "output_tokens": "x"}))
case("provider-exports", "provider exports: duplicates, broken rows, truncation", "anthropic_usage",
     files={"dup.json": json.dumps(_broken_copy).encode(),
            "truncated.json": json.dumps(bases.anthropic_usage_json("wk-cut")).encode()[:150],
            "truncated-later.json": json.dumps(bases.anthropic_usage_json("wk-cut2")).encode()[:-40],
            "bom.json": b"\xef\xbb\xbf" + json.dumps(bases.anthropic_usage_json("wk-bomj")).encode()},
     # cut before any field only a usage export has, a download cannot be told from any other JSON
     expect={"dup.json": ("loaded", 3, 2, 1, 0), "truncated-later.json": ("loaded", 1, 0, 1, 0),
             "bom.json": ("loaded", 2, 2, 0, 0)},
     rejects={"dup.json": [(3, '"output_tokens" is not a number')], "truncated-later.json": [(1, "not valid JSON")]},
     passed_over={"truncated.json": "text that is not JSON"})

# ---------------------------------------------------------------- text that looks like markup
HOSTILE_TEXT = "[/INST] [bold]b[/bold] :x: @spec render([map()], opts) \x1b[31mred\x1b[0m <script>alert(1)</script> $x$ {{ 7*7 }}"
case("markup-like-text", "markup-like text in printed fields", ("native", "claude_code"),
     files={"markup.jsonl": native_bytes("[mk]:x:", lambda L: [L[0].__setitem__("agent", HOSTILE_TEXT),
                                                              L[2].__setitem__("result_preview", HOSTILE_TEXT),
                                                              L[3].__setitem__("error", HOSTILE_TEXT)]),
            "[mk-cc].jsonl": _cc("[mk-cc]", _cc_content(3, [{"type": "text", "text": HOSTILE_TEXT}]))},
     expect={"markup.jsonl": LOADED_NATIVE, "[mk-cc].jsonl": ("loaded", 4, 4, 0, 0)})
case("long-strings", "markup-like text in printed fields", "native",
     files={"long.jsonl": native_bytes("long-" + "r" * 5000, setter(0, "agent", "a" * 1_000_000))},
     expect={"long.jsonl": LOADED_NATIVE})

# ---------------------------------------------------------------- runs split over files
_whole = bases.native("split")
case("run-over-two-files", "a run kept in several files", "native",
     files={"a-first.jsonl": jsonl(_whole), "b-again.jsonl": jsonl(_whole),
            "c-tail.jsonl": jsonl(bases.native("split-tail")[3:])},
     expect={"a-first.jsonl": LOADED_NATIVE, "b-again.jsonl": ("loaded", 7, 0, 0, 7), "c-tail.jsonl": ("loaded", 4, 0, 4, 0)},
     rejects={"c-tail.jsonl": [(n, "no run_start line") for n in (1, 2, 3, 4)]})


def classes() -> set[str]:
    return {c.klass for c in CASES}


def formats() -> set[str]:
    return {f for c in CASES for f in c.formats}


def write(case: Case, root: Path) -> Path:
    folder = root / case.id
    folder.mkdir(parents=True)
    for name, data in case.files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    if case.build:
        case.build(folder)
    return folder


# ---------------------------------------------------------------- issue 27: strict JSON, blank means any white space
# DuckDB's JSON parser accepts two things RFC 8259 does not: a trailing comma before } or ], and NaN / Inf /
# Infinity (any case, "-" allowed). Each is a reject naming its line; the same characters inside a string load.
STRICT_JSON = [  # (name, line, old, new, reason fragment)
    ("object-comma", 7, None, None, 'a trailing comma before "}"'),
    ("array-comma", 2, b'"x = 1"}}]', b'"x = 1"}},]', 'a trailing comma before "]"'),
    ("spaced-comma", 2, b'"lines":[1,2.0]', b'"lines":[1,2.0 ,\t\r ]', 'a trailing comma before "]"'),
    ("nested-nan", 2, b'"lines":[1,2.0]', b'"lines":[1,nan]', "nan is not a JSON number"),
    ("minus-infinity", 2, b'"lines":[1,2.0]', b'"lines":{"a":-Infinity}', "-Infinity is not a JSON number"),
    ("spaced-inf", 3, b'"ms":10,', b'"extra": \tINF ,"ms":10,', "INF is not a JSON number"),
]
for name, line, old, new, reason in STRICT_JSON:
    _data = native_bytes(f"strict-{name}")
    if old is None:  # the last line (run_end) ends in a comma before its closing brace
        _lines = _data.split(b"\n")
        _lines[6] = _lines[6][:-1] + b',}'
        _data = b"\n".join(_lines)
    else:
        _data = raw_line_edit(_data, line, old, new)
    case(f"strict-json-{name}", "JSON that is not quite JSON", "native",
         files={f"{name}.jsonl": _data}, expect={f"{name}.jsonl": ("loaded", 7, 6, 1, 0)},
         rejects={f"{name}.jsonl": [(line, f"not valid JSON: {reason}")]})
case("strict-json-lookalikes-in-strings", "JSON that is not quite JSON", ("native", "claude_code"),
     files={"lookalike.jsonl": native_bytes("strict-look", setter(2, "result_preview", 'a,] b,} : NaN, [inf, -Infinity,]')),
            "cc-look.jsonl": _cc("cc-look", _cc_content(3, "info: nan, infinite,}"))},
     expect={"lookalike.jsonl": LOADED_NATIVE, "cc-look.jsonl": ("loaded", 4, 4, 0, 0)})
_cc_comma = jsonl(bases.claude_code("strict-cc")).split(b"\n")
_cc_comma[1] = _cc_comma[1][:-1] + b",}"
case("strict-json-claude-code", "JSON that is not quite JSON", "claude_code",
     files={"strict-cc.jsonl": b"\n".join(_cc_comma)}, expect={"strict-cc.jsonl": ("loaded", 4, 3, 1, 0)},
     rejects={"strict-cc.jsonl": [(2, 'not valid JSON: a trailing comma before "}"')]})
# A line of nothing but white space, of any kind (form feed, vertical tab, CR, no-break space, ideographic
# space), carries no record: skipped as blank, never rejected.
_ws = native_bytes("ws-any").split(b"\n")
WHITE = [b"\x0c", b"\x0b", b" \t\x0c\x0b ", "\u00a0\u3000\u2028".encode(), b"\t" * 100]
case("blank-any-white-space", "line endings", "native",
     files={"white.jsonl": b"\n".join(_ws[:2] + WHITE + _ws[2:])},
     expect={"white.jsonl": ("loaded", 12, 7, 0, 5)}, notes={"white.jsonl": "5 blank line(s)"})


# ================================================================ issue 27 part 3: CSV exports and optional fields
# Provider CSV exports are read line by line (reconcile.formats.provider): a row is numbered from the
# header (row 1 is line 2) and its reason names the line; one bad row is rejected while the others load.
_CSV_HEADERS = {
    "openai_usage": "start_time,end_time,model,input_tokens,input_cached_tokens,output_tokens,num_model_requests",
    "openai_costs": "start_time,end_time,line_item,project_id,amount_value,amount_currency",
    "anthropic_usage": "starting_at,ending_at,model,workspace_id,uncached_input_tokens,cache_read_input_tokens,output_tokens",
    "anthropic_costs": "starting_at,ending_at,model,workspace_id,description,cost_type,amount,currency",
}
_CSV_ROWS = {  # two good rows each; the cost rows hold a comma and doubled quotes inside quoted fields
    "openai_usage": ["1764370800,1764374400,gpt-4o,100,10,5,1", "1764374400,1764378000,gpt-4o,200,10,5,1"],
    "openai_costs": ['1764370800,1764374400,"gpt-4o, input",proj,0.25,usd',
                     '1764374400,1764378000,"gpt-4o, ""output""",proj,0.5,usd'],
    "anthropic_usage": ["2026-11-28T22:00:00Z,2026-11-28T23:00:00Z,claude-sonnet-4-5,wk-csv,100,10,5",
                        "2026-11-28T23:00:00Z,2026-11-29T00:00:00Z,claude-sonnet-4-5,wk-csv,100,10,5"],
    "anthropic_costs": ['2026-11-28T22:00:00Z,2026-11-28T23:00:00Z,claude-sonnet-4-5,wk-csv,"Input, tokens",tokens,123.45,USD',
                        '2026-11-28T23:00:00Z,2026-11-29T00:00:00Z,claude-sonnet-4-5,wk-csv,"say ""hi""",tokens,1.5,USD'],
}


_CSV_DIMENSION = {"openai_usage": 2, "openai_costs": 3, "anthropic_usage": 3, "anthropic_costs": 3}  # a column left empty


def _quote_all(row: str, blank: int | None = None) -> str:
    """The row with every field quoted (as spreadsheets write it), field ``blank`` an empty quoted field."""
    import csv
    import io

    fields = next(csv.reader([row]))
    if blank is not None:
        fields[blank] = ""
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="").writerow(fields)
    return out.getvalue()


def _csv(kind: str, *lines: str, end: str = "\n") -> bytes:
    return (end.join([_CSV_HEADERS[kind], *lines]) + end).encode()


for _kind, (_good, _second) in _CSV_ROWS.items():
    _width, _end_column = len(_CSV_HEADERS[_kind].split(",")), _CSV_HEADERS[_kind].split(",")[1]
    case(f"csv-{_kind}", "provider CSV shapes", _kind,
         files={"short.csv": _csv(_kind, _good, _second.rsplit(",", 2)[0]),
                "open-quote.csv": _csv(_kind, _good, _second.replace(",", ',"', 1)),
                "open-quote-then-good.csv": _csv(_kind, _good, '"' + _second, _second.replace("T23", "T21")
                                                  .replace("1764374400,1764378000", "1764367200,1764370800")),
                "header-only.csv": _csv(_kind),
                "extra-fields.csv": _csv(_kind, _good, _second + ",x,y"),
                "crlf.csv": _csv(_kind, _good, _second, end="\r\n"),
                "bom.csv": b"\xef\xbb\xbf" + _csv(_kind, _good, _second),
                "quoted-all.csv": _csv(_kind, _quote_all(_good)),
                "empty-quoted.csv": _csv(_kind, _good, _quote_all(_second, blank=_CSV_DIMENSION[_kind])),
                "blank-lines.csv": _csv(_kind, "", _good, "  ", _second),
                "duplicate-header.csv": (_CSV_HEADERS[_kind] + "," + _end_column + "\n" + _good + ",1\n").encode(),
                "bad-utf8.csv": _csv(_kind, _good) + _second.encode().replace(b",", b",\xff", 1) + b"\n"},
         expect={"short.csv": ("loaded", 2, 1, 1, 0), "open-quote.csv": ("loaded", 2, 1, 1, 0),
                 "open-quote-then-good.csv": ("loaded", 3, 2, 1, 0), "header-only.csv": ("loaded", 0, 0, 0, 0),
                 "extra-fields.csv": ("loaded", 2, 1, 1, 0), "crlf.csv": ("loaded", 2, 2, 0, 0),
                 "bom.csv": ("loaded", 2, 2, 0, 0), "quoted-all.csv": ("loaded", 1, 1, 0, 0),
                 "empty-quoted.csv": ("loaded", 2, 2, 0, 0), "blank-lines.csv": ("loaded", 4, 2, 0, 2),
                 "duplicate-header.csv": ("loaded", 1, 0, 1, 0), "bad-utf8.csv": ("loaded", 2, 1, 1, 0)},
         rejects={"short.csv": [(2, f"row 2 (line 3) has {_width - 2} field(s); the header has {_width}: the row is cut")],
                  "open-quote.csv": [(2, "row 2 (line 3) is not a CSV row: a quoted field is left open")],
                  "open-quote-then-good.csv": [(2, "a quoted field is left open")],
                  "extra-fields.csv": [(2, f"row 2 (line 3) has {_width + 2} fields; the header has {_width}")],
                  "duplicate-header.csv": [(1, f'names column "{_end_column}" twice')],
                  "bad-utf8.csv": [(2, "row 2 (line 3): not valid UTF-8")]})
case("json-export-not-utf8", "provider CSV shapes", "anthropic_usage",
     files={"latin1.json": json.dumps(bases.anthropic_usage_json("wk-latin1")).encode().replace(b"wk-latin1", b"wk-\xe9")},
     expect={"latin1.json": ("loaded", 1, 0, 1, 0)}, rejects={"latin1.json": [(1, "not valid UTF-8")]})

# A native run with every optional field left out: no model, task class, provider, limits, tools or
# ledger (so no harness money), one model call whose model nobody recorded; and a run with no steps.
case("optional-fields-left-out", "optional fields left out", "native",
     files={"bare.jsonl": jsonl([
                {"v": 1, "type": "run_start", "run_id": "opt-bare", "ts": bases.TS.format(1), "agent": "opt"},
                {"v": 1, "type": "step", "run_id": "opt-bare", "idx": 0, "kind": "model", "ts": bases.TS.format(2),
                 "usage": {"input_uncached": 100, "output": 5}},
                {"v": 1, "type": "run_end", "run_id": "opt-bare", "ts": bases.TS.format(3), "stop_reason": "model_finished"}]),
            "no-steps.jsonl": jsonl([{"v": 1, "type": "run_start", "run_id": "opt-nosteps", "ts": bases.TS.format(1),
                                     "agent": "opt"}])},
     expect={"bare.jsonl": ("loaded", 3, 3, 0, 0), "no-steps.jsonl": ("loaded", 1, 1, 0, 0)})


# ---------------------------------------------------------------- issue 27 part 2/5: Claude Code blocks that broke the load
def _cc_block(n, change):
    return lambda L: change(L[n]["message"]["content"][0])


CC_BROKEN = {  # name: (change, line, reason fragment)
    "no-id": (_cc_block(1, lambda b: b.pop("id")), 2, 'tool_use block 1 has no "id"'),
    "id-number": (_cc_block(1, lambda b: b.__setitem__("id", 5)), 2, 'tool_use block 1 has "id" 5; expected a string'),
    "no-name": (_cc_block(1, lambda b: b.pop("name")), 2, 'tool_use block 1 has no "name"'),
    "name-null": (_cc_block(1, lambda b: b.__setitem__("name", None)), 2, 'tool_use block 1 has no "name"'),
    "no-tool-use-id": (_cc_block(2, lambda b: b.pop("tool_use_id")), 3, 'tool_result block 1 has no "tool_use_id"'),
    "tool-use-id-object": (_cc_block(2, lambda b: b.__setitem__("tool_use_id", {"a": 1})), 3,
                           'tool_result block 1 has "tool_use_id" {"a":1}; expected a string'),
}
case("claude-code-broken-blocks", "Claude Code content shapes", "claude_code",
     files={f"ccb-{name}.jsonl": _cc(f"ccb-{name}", change) for name, (change, _, _) in CC_BROKEN.items()}
     | {"ccb-junk-items.jsonl": _cc("ccb-junk-items", lambda L: L[1]["message"]["content"].extend(
            [5, "text", None, [1], {"type": 7, "id": None}, {"type": None}]))},
     expect={f"ccb-{name}.jsonl": ("loaded", 4, 3, 1, 0) for name in CC_BROKEN} | {"ccb-junk-items.jsonl": ("loaded", 4, 4, 0, 0)},
     rejects={f"ccb-{name}.jsonl": [(line, reason)] for name, (_, line, reason) in CC_BROKEN.items()})
case("claude-code-wide-input", "huge lines", "claude_code",
     files={"ccb-wide.jsonl": _cc("ccb-wide", _cc_block(1, lambda b: b.__setitem__("input", {"items": list(range(50_000))})))},
     expect={"ccb-wide.jsonl": ("loaded", 4, 4, 0, 0)})

# ================================================================ issue 27 part 6: documents DuckDB reads only leniently
_lf_text = json.dumps(bases.langfuse("doc-lenient-ok"))
case("strict-json-otel-and-exports", "JSON that is not quite JSON", ("otel", "anthropic_usage"),
     files={"comma-otel.json": (json.dumps(bases.otel("doc-comma-ot"))[:-1] + ",}").encode(),
            "comma-usage.json": (json.dumps(bases.anthropic_usage_json("wk-comma"))[:-1] + " ,}").encode()},
     expect={"comma-otel.json": ("loaded", 1, 0, 1, 0), "comma-usage.json": ("loaded", 1, 0, 1, 0)},
     rejects={"comma-otel.json": [(1, "not valid JSON")], "comma-usage.json": [(1, 'a trailing comma before "}"')]})
case("strict-json-documents", "JSON that is not quite JSON", ("langfuse", "swe_agent"),
     files={"comma.trace.json": (json.dumps(bases.langfuse("doc-comma"))[:-1] + ",}").encode(),
            "nan.trace.json": json.dumps(bases.langfuse("doc-nan")).replace('"total": 120', '"total": NaN', 1).encode(),
            "comma.traj": (json.dumps(bases.swe_agent("doc-comma-swe"))[:-1] + ", }").encode(),
            "ok.trace.json": _lf_text.encode()},
     expect={"comma.trace.json": ("loaded", 1, 0, 1, 0), "nan.trace.json": ("loaded", 1, 0, 1, 0),
             "comma.traj": ("loaded", 1, 0, 1, 0), "ok.trace.json": ("loaded", 4, 4, 0, 0)},
     rejects={"comma.trace.json": [(1, 'a trailing comma before "}"')], "nan.trace.json": [(1, "NaN is not a JSON")],
              "comma.traj": [(1, 'a trailing comma before "}"')]})
