"""Generate the docs that could drift from the code: ``python -m reconcile.docs_gen``.

``docs/status.md`` comes from the stop-reason rules, ``docs/sql-api.md`` from the live schema of
a fresh store. ``tests/test_docs.py`` fails when a committed file differs from what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from reconcile import store
from reconcile.store.fences import FENCES
from reconcile.store.status import HARNESS_STATUS_RULES, STATUSES, STOP_REASON_RULES

RELATIONS = {
    "run_view": "One row a run: status, step and token totals (disjoint buckets), wall seconds, cost, whether a "
                "final answer exists, the limits it ran under and the harness ledger beside what the steps add up to.",
    "step_view": "One row a step, in order: what it did, its tokens, cost and time, with the run's agent and status. "
                 "`select idx, kind, tool_name, cost_micros, ms, error from step_view where run_id = '8f3a'`.",
    "ledger_view": "One row a run: its harness ledger beside what the steps it covers add up to — the run's own, or, "
                   "for the root of an agent tree whose budget the tree shares (`limits.scope = tree`), every run of the "
                   "tree's — with the wrap-up turns apart, since a harness may charge them or not.",
    "wrap_up_turns": "One row a step right after a `wrap_up` event that asks for no tool (`run_id`, `idx`): the "
                     "designed graceful stop. A model call among them is `step_view.is_wrap_up`; a loop detector's "
                     "replay does not count it among the calls after it fired.",
    "open_calls": "One row a tool call with no result: `in_flight` when the run is still `running` and no model step "
                  "follows the call (the harness is mid-call); otherwise (the run ended, went on, or is `abandoned`) its "
                  "result is lost.",
    "run_costs": "One row a run: its cost by reconcile's prices by the one rule -- exact (`ours_micros`, "
                 "`ours_complete`), else between `ours_low_micros` and `ours_high_micros` (NULL: no ceiling, \"at "
                 "least\" the floor; the floor is never NULL), with the same bounds unrounded for sums over runs -- what "
                 "its harness recorded (`harness_micros`: the ledger, else its calls' own costs where every call has "
                 "one; `harness_partial_micros` where only some do), and why ours is not exact (unpriced tokens, calls "
                 "without usage, with a token count unknown, with an unknown cached share). `--cost-source` picks.",
    "chosen_costs": "One row a run and a cost source asked for (`asked`: `auto`, `ours`, `harness`): `run_costs` with "
                    "the source that answers (`source`), its figure by the one rule (`cost_micros` where exact, "
                    "`complete`; else `cost_low_micros` .. `cost_high_micros`, NULL high: at least; the `*_unrounded` "
                    "pair for sums), and `harness_below_floor` where the harness's own figure is below reconcile's "
                    "floor for the same calls (`auto` then shows reconcile's). "
                    "`select run_id, cost_micros from chosen_costs where asked = 'auto'`.",
    "run_totals": "One row a run with steps: its steps rolled up and priced (counts of calls, exact and bounded calls, "
                  "token buckets, the cost's floor and ceiling unrounded, the uncached counterfactual, the catalogue tax, "
                  "the harness's own figures) -- what `run_view` and `run_costs` add to the run's row. Kept in a store: "
                  "a table written when the run is landed again or the prices its calls read change, keyed in `kept_run_keys` "
                  "(its latest landing's number in `run_loads`; the day, for a call with no time, priced at today's "
                  "prices), "
                  "`kept_run_prices` (the provider, model and day of each call) and `kept_price_rows` (each "
                  "`model_prices` row's digest when written). `reconcile rebuild` writes them all again.",
    "run_model_totals": "One row a run, the model its steps were priced as and, for a run with no start of its own, "
                        "each step's start: the same rolled up for a cost report's groups (a run that switched models "
                        "counts under each, `credited` where its answer came from). Kept like `run_totals`.",
    "request_cost_hours": "One row a run and UTC hour with priced model requests (a step with no time of its own at "
                          "the run's start): how many, and their exact cost. What the week-over-week cost per request "
                          "adds up. Kept like `run_totals`.",
    "journal_usage_minutes": "One row a run, provider, model and UTC minute its journalled calls answered in: the "
                             "calls (and those with a bucket left out), each token bucket, their priced cost's floor "
                             "and ceiling unrounded and the calls with no ceiling. What the match with the providers' "
                             "usage and bills adds up (docs/usage.md). Kept like `run_totals`.",
    "kept_run_keys": "One row a run: what its kept rows (`run_totals`, `run_model_totals`, `request_cost_hours`, "
                     "`journal_usage_minutes`) were written from -- "
                     "`content_key` (its latest landing, `load:N`, else its file and digest), `priced_on` (the day its "
                     "calls of no time were priced at, NULL when every call has a time), `revision` (a number the "
                     "writing takes: a signal's kept sums and a run's kept peaks name it).",
    "kept_run_prices": "One row a run and a (provider, model, day) its calls are priced by: the runs a price change "
                       "writes again.",
    "kept_price_rows": "Each `model_prices` row's digest when the kept totals were last written: a row that differs now "
                       "is a price that changed.",
    "run_loads": "One row a run: the number of its latest landing, written in the transaction that inserts its row "
                 "(a run kept as it was by a tail read keeps its number).",
    "run_roots": "One row a run: the topmost ancestor in the store (`root_run_id`, the run itself when it has none) — "
                 "its agent tree, looked up through six levels of sub-agents.",
    "runs": "The canonical run records as loaded (the ledger counters are the harness's own, never recomputed).",
    "steps": "The canonical steps as loaded; usage buckets are disjoint and reasoning is a subset of output.",
    "run_tools": "Each run's tool catalogue: side-effect and allow-repeat flags, schema size in tokens.",
    "tool_calls": "The tool calls each model step asked for, with canonical arguments, their hash and idempotency key.",
    "ingested_files": "Every file ingested, loaded or not: path, SHA-256, format, status (loaded, failed, unreadable) and why, and lines = loaded + rejected + skipped. A file last read by its tail has `tail:` and a digest of its reads for a SHA-256: it changes whenever the content does.",
    "file_checkpoints": "Where a later ingest may go on reading a line file from: the file's identity, digests of its first bytes and of the bytes before where it was read to, the first line a tail read reads again and the outcomes of the lines before it. Written with the file's rows, in one transaction (docs/architecture.md).",
    "rejects": "Every rejected line: file, line number, reason and the raw line (cut to 4 KB).",
    "findings": "What each check run found: check, severity, run, step, detail, and when it ran.",
    "check_runs": "Every check that ran, failing or not, with its failure count.",
    "run_facts": "One row a run, one boolean column a fact: whether the run (or its format) records it. Checks "
                 "judge only the runs that record the facts they need (see docs/checks.md).",
    "format_facts": "What each registered transcript format records (`recorded`), how, and whether reconcile "
                    "infers it (`inferred`). Written from the formats' declarations on every read-write open.",
}

STATUS_MEANINGS = {
    "succeeded": "the agent finished its task with an answer",
    "failed": "the run ended without completing its task (an error, a fatal tool failure)",
    "cancelled": "someone or something stopped the run on purpose",
    "budget_exceeded": "a step, token or spend ceiling stopped the run",
    "timed_out": "a wall-clock or command time limit stopped the run",
    "stalled": "the harness saw the run repeating itself and stopped it",
    "abandoned": "no end record, and silent longer than its wall-clock budget (else [ingest] abandoned_after_hours, "
                 "24 by default) before the last ingest: it crashed or was left, and will not end by itself",
    "running": "no end record, and heard from within its wall-clock budget (else 24 hours) of the last ingest: "
               "still going, or too recently silent to say",
}


def status_markdown() -> str:
    lines = ["# Run statuses and stop reasons", "",
             "<!-- generated by `python -m reconcile.docs_gen` from reconcile/store/status.py; do not edit -->", "",
             "Every run gets exactly one canonical status. The raw stop reason is always kept beside it",
             "(`runs.stop_reason`), so nothing the harness said is lost.", "",
             "| status | meaning |", "|---|---|"]
    lines += [f"| `{s}` | {STATUS_MEANINGS[s]} |" for s in STATUSES]
    lines += ["", "## Mapping from raw stop reasons", "",
              "Rules are tried in order; the first whose pattern matches the whole reason (case-insensitive,",
              "surrounding spaces ignored) gives the status. Numbers in a reason may carry thousands separators,",
              "decimals, a currency sign and a unit, as harnesses print them (`token limit (200,000)`,",
              "`cost limit ($2.00)`, `time limit (300.0s)`). The last column is the limit the reason names:",
              "`reconcile budgets` reads it to tell which ceiling cut a run.", "",
              "| pattern (regular expression) | status | why | names |", "|---|---|---|---|"]
    for rule in STOP_REASON_RULES:
        lines.append(f"| `{_cell(rule.pattern)}` | {_status(rule.status)} | {_cell(rule.why)} | {rule.names or ''} |")
    lines += ["", "## A status of the harness's own", "",
              "A native `run_end` line may carry `status`, the harness's own word for how the run ended (kept raw",
              "in `runs.harness_status`). It is mapped by these rules, tried in order; a word no rule knows leaves",
              "the stop reason to decide. A run_end line is refused only when neither its status nor its stop",
              "reason says anything known, and the journal writer refuses it at once.", "",
              "| status pattern | status | why |", "|---|---|---|"]
    for rule in HARNESS_STATUS_RULES:
        lines.append(f"| `{_cell(rule.pattern)}` | {_status(rule.status)} | {_cell(rule.why)} |")
    lines += ["", "## Fence rules", "",
              "A fence checks its ceilings before each model call, against what the calls before it spent; a count",
              "ceiling is reached at `>=`. What still differs between harnesses decides the verdict exactly at a",
              "limit, so a run says which rules its fence follows (`fence` on `run_start`, else the configuration's",
              "`fence` setting for its agent or format, else `default`). `budgets_enforced`, `reconcile replay` and",
              "`reconcile budgets` read these rules and nothing else (`reconcile/store/fences.py`).", "",
              "| rules | wall clock reached | order of the checks | retry of a refused call | stop reasons written |",
              "|---|---|---|---|---|"]
    for fence in FENCES.values():
        words = ", ".join(f"{CEILING_NAMES[c]}: `{fence.words[c]}`" for c in fence.order)
        lines.append(f"| `{fence.name}` — {_cell(fence.about)} | {'at the limit (>=)' if fence.wall_at_limit else 'only past it (>)'} "
                     f"| {', '.join(CEILING_NAMES[c] for c in fence.order)} | "
                     f"{'checked again' if fence.checks_retries else 'not checked'} | {_cell(words)} |")
    lines += ["", "`{loop_words}` is the loop detector's own: `identical_tool_results` (results in a row),",
              "`repeated the same tool calls N times without progress` (calls anywhere), `no_progress` (the window)."]
    return "\n".join(lines) + "\n"


CEILING_NAMES = {"steps": "steps", "tokens": "tokens", "prompt_tokens": "prompt tokens",
                 "completion_tokens": "completion tokens", "wall_seconds": "wall clock", "cost_micros": "spend",
                 "loop": "loop detector"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _status(status: str) -> str:
    return {"(itself)": "the same status", "(by reason)": "by the stop reason"}.get(status, status)


def sql_api_markdown() -> str:
    con = store.connect(":memory:")
    lines = ["# The SQL API", "",
             "<!-- generated by `python -m reconcile.docs_gen` from a fresh store; do not edit -->", "",
             "Query these with `reconcile sql \"SELECT …\"`, or open the DuckDB file in any DuckDB client.",
             "Timestamps are `TIMESTAMPTZ` in UTC; money is integer micro-dollars (`*_micros`).", ""]
    for name, about in RELATIONS.items():
        columns = con.execute(f"describe {name}").fetchall()
        lines += [f"## `{name}`", "", about, "", "| column | type |", "|---|---|"]
        lines += [f"| `{c[0]}` | {c[1]} |" for c in columns]
        lines.append("")
    con.close()
    return "\n".join(lines + KEPT_TABLES)


# What a store keeps of its runs besides their rows: derived, written again where their keys change (docs/architecture.md)
KEPT_TABLES = [
    "## Kept tables", "",
    "Derived from the runs' rows and kept so that a command reads runs, not steps. Each is written again for a run "
    "when its key changes, and `reconcile rebuild` writes the totals from scratch. In an export read back "
    "(`--from-parquet`) and on Spark, `run_totals`, `run_model_totals`, `request_cost_hours` and "
    "`journal_usage_minutes` are views over `step_view`, and the others "
    "are not kept.", "",
    "| kept | one row | keyed by |", "|---|---|---|",
    "| `run_totals`, `run_model_totals`, `request_cost_hours`, `journal_usage_minutes` | a run (by model; by hour; by "
    "provider, model and minute) | `kept_run_keys`: the run's latest landing (`run_loads`), "
    "the day an undated call was priced at; `kept_run_prices` against `kept_price_rows`: the prices its calls read |",
    "| `signal_minutes`, `kept_signal_runs` (kept by the morning and the watch; a read-only reading computes what is missing) | a signal, run, key and minute: count and sum "
    "| the signal's SQL digest and the run's `revision` (docs/signals.md) |",
    "| `fence_peaks` (kept by the morning; a read-only `budgets` walks what is missing) | a run, its own budget: its ledger at its last checked call | the "
    "run's `revision`, status and end, its tree's root and the root's `run_settings`, the walk's SQL |",
    "| `kept_judgements`, `kept_findings` | a check's verdict on a run | the check's SQL, the code, the configuration "
    "and the prices; the contents (landings) and statuses of the run's tree's runs (docs/checks.md) |", ""]


def formats_markdown() -> str:
    from reconcile.format_docs import formats_markdown as build

    return build()


def checks_markdown() -> str:
    from reconcile.checks import load_checks
    from reconcile.config.settings import DEFAULTS
    from reconcile.store.facts import FACTS
    from reconcile.formats import transcript_formats

    formats = transcript_formats()
    lines = ["# The checks", "",
             "<!-- generated by `python -m reconcile.docs_gen` from the headers in queries/; do not edit -->", "",
             "Each check is one SQL file in `queries/` returning the rows that violate its invariant (no rows:",
             "it holds). `reconcile check` runs them all; an `error` finding makes it exit 1, a `warn` one",
             "does not. Add your own with `--checks-dir DIR` (same header, columns `run_id, step, detail`).", "",
             "A check judges only the runs whose transcripts record the facts it **needs** (its header's",
             "`needs:` line). Runs it cannot judge are not findings and not passes: `reconcile check` counts",
             "them per check with the reason (`not_judged` in `--json`; `-v` prints a line a check, e.g.",
             "\"not judged for 12 claude_code runs: the claude_code format records no tool catalogue\"). Without",
             "`-v` they are collapsed to one line a format (\"11 check(s) need facts the claude_code format",
             "does not record (5 run(s)): …\") and one a reason the checks share (a setting not given).", "",
             "A check that **judges each run** (header `judges: each run`) promises that what it finds on a run",
             "depends only on that run's agent tree. Its verdict on each run is kept in the store (by a check",
             "that records, such as `reconcile morning`) under the check's key (its SQL, reconcile's code, the",
             "configuration, the price list) and the run's (the content of every run of its tree -- the landing",
             "that last wrote its rows, so a growing journal's earlier runs keep theirs -- and their statuses).",
             "The next check reuses a verdict whose keys still match and judges only the other runs: a night",
             "that adds a tenth of the runs is judged a tenth. The rest judge **the store** (a bill against the",
             "journals, a week against the weeks before): they read sums kept by run (`journal_usage_minutes`,",
             "`request_cost_hours`: docs/sql-api.md), not every step of the history.", "",
             "A header's optional `cites:` line names the design note a rule comes from (\"seed 003 (transport",
             "retries)\"): the morning report shows it as a footnote, so the invariant and the remedy can say",
             "what the rule checks in plain words.", "",
             "| check | severity | needs | judges | invariant |", "|---|---|---|---|---|"]
    checks = load_checks()
    lines += [f"| [`{c.name}`](#{c.name}) | {c.severity} | {', '.join(c.needs) or '—'} | {c.judges} | {c.invariant} |"
              for c in checks]
    for c in checks:
        lines += ["", f"## {c.name}", "", f"**Invariant.** {c.invariant}", "", f"**Severity.** {c.severity}", "",
                  f"**Judges** {c.judges}.", ""]
        for fact in c.needs:
            if FACTS[fact].subject == "bucket":
                lines += [f"**Needs** `{fact}`: the {FACTS[fact].what}; a provider's usage or cost rows are judged "
                          "only when the store holds journals of that provider.", ""]
                continue
            recorded = [f.name for f in formats if fact in f.facts or fact in f.policy_facts()]
            lines += [f"**Needs** `{fact}` ({FACTS[fact].what}), recorded by: "
                      f"{', '.join(f'`{n}`' for n in recorded) or 'no built-in format'}.", ""]
        lines += [f"**Remedy.** {c.remedy}", ""] + ([f"**Cites** {c.cites}.", ""] if c.cites else []) \
            + [f"Source: `queries/{c.path.name}`"]
    lines += ["", "## Facts, by format", "",
              "What each format records. *inferred*: reconcile derives it from the transcript, so no check",
              "judges the format against it; blank: not recorded (NULL in the store, never a default).", "",
              "| fact | " + " | ".join(f"`{f.name}`" for f in formats) + " |",
              "|---|" + "---|" * len(formats)]
    for fact, about in FACTS.items():
        if about.subject != "run":
            continue
        if fact == "buckets":  # judged per call from the data: where a format records usage, a call may leave a bucket out
            lines.append(f"| `{fact}`: {about.what} | " + " | ".join("per call" if "usage" in f.facts else "" for f in formats)
                         + " |")
            continue
        cells = ["inferred" if fact in f.inferred else "documented default" if fact in f.policy_facts()
                 else "yes" if fact in f.facts else "" for f in formats]
        lines.append(f"| `{fact}`: {about.what} | " + " | ".join(cells) + " |")
    lines += ["", "## Settings", "",
              "Settings are configuration (`reconcile.toml`, `[tool.reconcile]` in `pyproject.toml`, or",
              "`--set KEY=VALUE`; see [configuration.md](configuration.md)); `reconcile config` shows the",
              "effective values and where each came from. Checks read them as DuckDB variables",
              "(`getvariable('KEY')`) and, for the ones that may differ by run, from the `run_settings` table",
              "the runner creates (`result_bound_tokens`, `tool_error_pattern`, `stall_window`, `stall_repeats`).", "",
              "| key | default | meaning |", "|---|---|---|"]
    lines += [f"| `{k}` | {'none' if v is None else '`' + v.replace('|', chr(92) + '|') + '`'} | {about} |"
              for k, (v, _, about) in DEFAULTS.items()]
    lines += ["", "Documented defaults of the formats (used when neither the run nor the configuration gives a value):", ""]
    lines += [f"- `{f.name}`: `{key}` = {value} — {why}" for f in formats for key, (value, why) in f.policy.items()]
    lines += ["", "To run a check file by hand in the `duckdb` shell, first run the statements",
              "`reconcile config --sql --db STORE` prints (the variables and `run_settings` for your",
              "configuration). The file's rows are then every violation, judged or not: the runner's filter",
              "of runs that lack a needed fact is not part of the file."]
    return "\n".join(lines) + "\n"


def cli_markdown() -> str:
    from reconcile.cli_doc import cli_markdown as build

    return build()


GENERATED = {"status.md": status_markdown, "sql-api.md": sql_api_markdown, "checks.md": checks_markdown,
             "formats.md": formats_markdown, "cli.md": cli_markdown}


def write_all(docs: Path) -> None:
    for name, build in GENERATED.items():
        (docs / name).write_text(build())


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "docs"
    write_all(target)
    print(f"wrote {', '.join(GENERATED)} in {target}")
