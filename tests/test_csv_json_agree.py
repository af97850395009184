"""--csv and --json say the same rows under the same names and units; totals apart; figures only in figures."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest

# (command, where JSON keeps the CSV's rows: None for a bare list)
COMMANDS = [
    (["runs"], None),
    (["cost"], "groups"),
    (["cost", "--by", "agent"], "groups"),
    (["usage"], "groups"),
    (["budgets"], "ceilings"),
    (["check"], "findings"),
    (["cost", "project"], None),
    (["prices", "list", "--snapshot", "--model", "haiku"], None),
]


def both(cli, db, args):
    table = cli(*args, "--csv", "--db", db)
    data = cli(*args, "--json", "--db", db)
    assert table.code in (0, 1) and data.code == table.code, (args, table.err, data.err)
    return list(csv.reader(io.StringIO(table.out))), data.json()


@pytest.mark.parametrize(("args", "where"), COMMANDS, ids=[" ".join(a) for a, _ in COMMANDS])
def test_json_rows_have_the_csv_header_as_keys(cli, night_db, args, where):
    lines, data = both(cli, night_db, args)
    header, rows = lines[0], lines[1:]
    json_rows = data if where is None else data[where]
    assert rows and len(json_rows) == len(rows)
    for row in json_rows:
        assert list(row) == header  # the same names, in the same order
    assert not any(k.endswith("_micros") for k in header)  # money is dollars, *_usd, in both


@pytest.mark.parametrize("args", [["cost"], ["cost", "--by", "agent"], ["usage"]], ids=" ".join)
def test_totals_are_apart_from_the_rows(cli, night_db, args):
    lines, data = both(cli, night_db, args)
    assert all(row[0] != "total" for row in lines[1:])  # no total row inside the data
    assert data["total"]["key"] == "total"
    header = lines[0]
    assert list(data["total"]) == header
    for name in ("cost_usd", "provider_tokens"):  # the total is the sum of the rows
        values = [r[name] for r in data["groups"]] if name in header else [None]
        if None not in values and data["total"][name] is not None and args[-1] != "agent":
            assert Decimal(str(data["total"][name])) == sum(Decimal(str(v)) for v in values)
    table = cli(*args, "--db", night_db).out
    assert any(line.split("│")[1].strip() == "total" for line in table.splitlines() if "│" in line)  # shown to people


def test_money_agrees_to_the_micro_dollar(cli, night_db):
    lines, data = both(cli, night_db, ["runs"])
    header = lines[0]
    column = header.index("cost_usd")
    for row, record in zip(lines[1:], data):
        if row[column]:
            assert Decimal(row[column]) == Decimal(str(record["cost_usd"]))
        else:
            assert record["cost_usd"] is None


def test_numeric_columns_hold_only_numbers(cli, night_db):
    lines, data = both(cli, night_db, ["cost"])
    header = lines[0]
    numeric = [i for i, name in enumerate(header)
               if name.endswith(("_usd", "_tokens", "_runs", "_steps", "_rate", "_share")) or name in ("runs", "model_calls")]
    for row in lines[1:]:
        for i in numeric:
            if row[i] != "":  # unknown is empty, never words
                Decimal(row[i])
    assert "left_out" not in header  # the words "283,081 tokens unpriced" are the table's; CSV has unpriced_tokens
    assert {"unpriced_tokens", "unpriced_steps", "calls_without_usage", "runs_without_cost"} <= set(header)
