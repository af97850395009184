"""docs/cli.md, the command reference, written from each command's own ``--help``: its usage line, its
description and its options, so the reference never says one thing while the command does another.

``python -m reconcile.docs_gen`` writes it; ``tests/test_docs.py`` fails while the committed file is stale.
"""

from __future__ import annotations

from typing import Any

# What every command shares, said once above the commands (each command's own options follow it).
EVERY_COMMAND = """\
Every command takes `--db STORE` (default `$RECONCILE_DB`, else `db` in the configuration, else
`./reconcile.duckdb`), `--config FILE` (default `./reconcile.toml`, else `[tool.reconcile]` in
`./pyproject.toml`; see [configuration.md](configuration.md)) and `--help`. The commands that load
files create a store where there is none: `ingest`, `morning`, `watch` and `runs PATH…`. Every other
command opens it read-only and refuses a path where there is none (exit 2), so a typo in `--db` is
never an empty store that passes. The commands that take `--from-parquet DIR` read an export instead,
and run it on Apache Spark with `--engine spark` ([scale-out.md](scale-out.md)).

**Time.** Every reporting command takes `--since WHEN` / `--until WHEN` — an ISO date or time,
`today`, `yesterday`, `now`, or an age (`12h`, `7d`, `2w`, counted back from now) — and `--tz ZONE`
(an IANA name; default the machine's local zone, also `$RECONCILE_TZ`). A date read as `--until`
means the end of that day; a time without an offset is in `--tz`. Days, weeks (ISO, from Monday)
and months in `--by` are the zone's; each table's heading names its window and zone; the morning
report's *night* runs from noon to noon. Stored timestamps stay UTC.

**An empty window** reads the same everywhere: "no runs since 2026-12-01 00:00 (UTC); the store
spans 2026-11-28 22:02 .. 2026-11-29 05:30 (300 run(s))". Commands that judge (`check`, `budgets`,
`replay`, `report`, `morning`) stop there with exit 2 — nothing judged is not a pass; commands that
list (`runs`, `cost`) print that line and exit 0. A run whose start nobody recorded is in every
all-time view and in no bounded window. `runs` (and `rc.runs()`) fold Claude Code sub-agents into
their sessions; `summary` and `cost` count them as runs, and say so.

**Tables.** A table fits the terminal, 80 columns included: the columns it is named for stay
(`cost`'s cost, `budgets`' recommended and configured, `replay`'s successes lost), ids are shortened
to a unique prefix of at least 8 characters, prose folds between words, and the columns read last
are left out (named under the table); `--wide` shows every column. Every table command takes
`--json`, `--csv` and `--parquet FILE`: values, not their display (money as exact dollars,
`*_usd`; times in UTC). Every sum of money is exact, a range ("$a to $b") or "at least $a" — never
the known part alone ([costs.md](costs.md#one-rule-for-every-sum-of-money)).
"""

# What each exit code means (reconcile.errors.ExitCode names them).
EXIT_CODES = {
    "OK": "done; nothing at error severity",
    "FINDINGS": "a check found a violation at error severity",
    "BAD_INPUT": "bad input or usage: a missing path or store, a store or window with no runs, an unknown format, a "
                 "file that could not be loaded (the others were), a full disk (nothing of the file was saved), a bad "
                 "argument or configuration, a refused query",
    "INTERNAL": "a bug in reconcile (re-run with `RECONCILE_DEBUG=1` for the traceback)",
    "INTERRUPTED": "stopped by Ctrl-C: one line says what was kept (what was under way is not saved, what was saved "
                   "before it is whole); run the command again to do the rest",
}


def commands() -> list[tuple[str, Any]]:
    """Every (command path, click command) of the CLI in the order of ``reconcile --help``, a group's own options
    (``cost``) before its subcommands (``cost project``)."""
    import typer

    from reconcile.cli import app, load_commands
    from reconcile.cli.help import SECTIONS

    load_commands()
    root = typer.main.get_command(app)
    order = [name for _, names in SECTIONS for name in names]
    found: list[tuple[str, Any]] = []

    def walk(command, path: list[str]) -> None:
        if hasattr(command, "list_commands"):
            if any(_documented(p) for p in command.params):
                found.append((" ".join(path), command))
            ctx = type(command).context_class(command)
            names = command.list_commands(ctx)
            if not path:
                names = sorted(names, key=lambda n: (order.index(n) if n in order else len(order), n))
            for name in names:
                walk(command.get_command(ctx, name), [*path, name])
        else:
            found.append((" ".join(path), command))

    walk(root, [])
    return found


def _documented(param) -> bool:
    """An option a reader sets (the shell-completion installers typer adds to the root are left out)."""
    return type(param).__name__.endswith("Option") and not {"--help", "--install-completion",
                                                           "--show-completion"} & set(param.opts)


def _metavar(param) -> str:
    from reconcile.cli.help import METAVARS

    return METAVARS.get(param.name) or param.metavar or param.name.upper()


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _takes(param) -> str:
    if type(param).__name__.endswith("Argument"):
        return ""
    if getattr(param, "is_flag", False) or getattr(param, "is_bool_flag", False):
        return ""
    return _metavar(param)


def _default(param) -> str:
    value = param.default
    if value is None or value is False or value == () or value == []:
        return ""
    return f"`{value}`" if not isinstance(value, bool) else "yes"


def _usage(path: str, command) -> str:
    arguments = [p for p in command.params if type(p).__name__.endswith("Argument")]
    words = [_metavar(p) + ("" if p.required else " (optional)") for p in arguments]
    group = " COMMAND" if hasattr(command, "list_commands") else ""
    return " ".join(["reconcile", *path.split(), "[OPTIONS]"]) + group + "".join(f" {w}" for w in words)


def cli_markdown() -> str:
    from reconcile.errors import ExitCode

    lines = ["# Command reference", "",
             "<!-- generated by `python -m reconcile.docs_gen` from each command's --help; do not edit -->", "",
             "Each command below is its own `reconcile COMMAND --help`, the options as it takes them. The",
             "[README](../README.md) has the everyday tasks; the topic docs say what the figures mean.", "",
             "## Every command", "", EVERY_COMMAND.rstrip(), "", "## Exit codes", "",
             "| code | name | meaning |", "|---|---|---|"]
    lines += [f"| {code.value} | `{code.name}` | {EXIT_CODES[code.name]} |" for code in ExitCode]
    for path, command in commands():
        lines += ["", f"## `{' '.join(['reconcile', *path.split()])}`", "", "```", _usage(path, command), "```", ""]
        help_text = (command.help or "").strip()
        lines += [help_text, ""] if help_text else []
        arguments = [p for p in command.params if type(p).__name__.endswith("Argument")]
        options = [p for p in command.params if _documented(p)]
        if arguments or options:
            lines += ["| option | takes | default | what |", "|---|---|---|---|"]
            lines += [f"| `{_metavar(p)}` (argument) |  |  | {_cell(getattr(p, 'help', '') or '')} |"
                      for p in arguments]
            lines += [f"| {', '.join(f'`{o}`' for o in [*p.opts, *p.secondary_opts])} | {_cell(_takes(p))} | "
                      f"{_cell(_default(p))} | {_cell(p.help or '')} |" for p in options]
    return "\n".join(lines) + "\n"
