"""Model prices: a dated snapshot of genai-prices, user overrides, and their resolution.

``prices`` holds, per provider and model, one row per price period (``effective_from`` to
``effective_to``, exclusive) with the *effective* price of each disjoint bucket in dollars per
million tokens (= micro-dollars per token), the way genai-prices bills it: a bucket without a
price of its own falls back to its parent (cache reads and cache writes to input, 5 m and 1 h
cache writes to cache writes). A tiered price (Anthropic's long context) applies to every token
of a request whose total input passes ``tier_start``.

Resolution runs once per distinct (provider, model, day) among the model steps, not per step:
an override (a user's file: negotiated rates, models the package lacks) wins, else genai-prices'
own matcher names the model and the ``prices`` row for that day is taken — a shipped correction
of that entry where one covers the day (``price_files``), else the library's own. The result goes to
``model_prices``; ``step_view`` prices every step from it in SQL. A model with no price gets a
row with NULL prices, so ``cost_micros`` stays NULL (never $0) and ``models_priced`` reports it.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from reconcile.errors import BadInput
from reconcile.store import kept_totals
from reconcile.prices.price_files import (CORRECTIONS, MINIMUMS, corrections, read_minimum_rows, read_override_rows,
                                          shipped_minimums)
from reconcile.store import records
from reconcile.sql_text import string_literal, value_literal

BUCKETS = ("uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output")
SNAPSHOT = "genai-prices"
SHIPPED = (SNAPSHOT, CORRECTIONS)  # the prices that come with the install, as opposed to a user's overrides


def snapshot_version() -> str:
    """The installed genai-prices version, read from its metadata (importing the package costs 0.1 s)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("genai-prices")
    except PackageNotFoundError:
        import genai_prices

        return getattr(genai_prices, "__version__", "unknown")


def ensure_snapshot(con: duckdb.DuckDBPyConnection) -> None:
    """Load the installed genai-prices snapshot and reconcile's corrections into ``prices`` unless
    those versions are there."""
    version, (fix_version, fixes) = snapshot_version(), corrections()
    minimums_version, minimums = shipped_minimums()
    loaded = con.execute("select count(*) filter (where source = ? and source_version = ?), "
                         "count(*) filter (where source = ? and source_version = ?), "
                         "(select count(*) from cache_minimums where source = ? and source_version = ?) from prices",
                         [SNAPSHOT, version, CORRECTIONS, fix_version, MINIMUMS, minimums_version]).fetchall()[0]
    if loaded[0] and loaded[1] == len(fixes) and loaded[2] == len(minimums):
        return
    con.execute("begin")
    con.execute("delete from cache_minimums where source = ?", [MINIMUMS])
    con.executemany("insert into cache_minimums values (?, ?, ?, ?, ?, ?, ?)",
                    [[*row, minimums_version] for row in minimums])
    con.execute("delete from prices where source in (?, ?)", list(SHIPPED))
    columns = _snapshot_columns(version)
    # text into the table's own types (dates, decimal(18,9), bigint): the insert's casts are exact
    con.execute("insert into prices select " + ", ".join(f"unnest(${n})" for n in range(1, len(columns) + 1)), columns)
    con.executemany(f"insert into prices values ({', '.join(['?'] * 17)})", [[*row, fix_version] for row in fixes])
    con.execute("delete from model_prices")  # prices changed: resolve again
    con.execute("commit")


@functools.lru_cache(maxsize=1)
def _snapshot_columns(version: str) -> list[list]:
    """The snapshot flattened to ``prices`` rows, as one list a column in the table's order (dates and
    money as text, cast exactly into the table's types by the insert), once per process.

    Inserted by one ``unnest`` statement: an Arrow table would be as quick, but building one makes
    pyarrow ask whether its input is a pandas frame, and importing pandas to answer cost a third of a
    second on every fresh store.
    """
    from genai_prices import data_snapshot

    rows = []
    for provider in data_snapshot.get_snapshot().providers:
        for model in provider.models:
            for start, end, model_price in _periods(model.prices):
                rows.append([provider.id, model.id, start, end, *_flatten(model_price), SNAPSHOT, version])
    # Kept to 9 decimals of a dollar per million tokens: the snapshot has float artefacts such as
    # 0.18000000000000002, and 1e-9 $/MTok is far below a micro-dollar on any request.
    return [[None if v is None else str(_nine(v)) for v in column] for column in zip(*rows)]


def _nine(value: Any) -> Any:
    return value.quantize(Decimal("1e-9")) if isinstance(value, Decimal) else value


def _periods(prices: Any) -> list[tuple[dt.date | None, dt.date | None, Any]]:
    """(from, to, ModelPrice) for a model's price, or its list of dated conditional prices."""
    if not isinstance(prices, list):
        return [(None, None, prices)]
    dated = []
    for conditional in prices:
        constraint = conditional.constraint
        if constraint is None:
            dated.append((None, conditional.prices))
        elif hasattr(constraint, "start_date") and not hasattr(constraint, "start_time"):
            dated.append((constraint.start_date, conditional.prices))
        # time-of-day prices (off-peak discounts) are left out: a step's hour is not a billing fact
    dated.sort(key=lambda item: item[0] or dt.date.min)
    return [(start, dated[i + 1][0] if i + 1 < len(dated) else None, price) for i, (start, price) in enumerate(dated)]


def _flatten(model_price: Any) -> list:
    """Effective (base prices, tier start, tier prices) of the five buckets, as genai-prices bills them."""
    def get(name: str):
        return getattr(model_price, name, None)

    source = get("input_mtok")
    read = get("cache_read_mtok") or source
    write = get("cache_write_mtok") or source
    values = [source, read, get("cache_write_5m_mtok") or write, get("cache_write_1h_mtok") or write, get("output_mtok")]
    base = [getattr(v, "base", v) for v in values]
    starts = sorted({tier.start for v in values if hasattr(v, "tiers") for tier in v.tiers})
    if not starts:
        return [*base, None, *[None] * 5]
    start = starts[0]  # every tiered price in the snapshot has one tier, at the same start

    def at_tier(value):
        if not hasattr(value, "tiers"):
            return value
        return next((tier.price for tier in value.tiers if tier.start == start), value.base)

    return [*base, start, *[at_tier(v) for v in values]]


def load_overrides(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Replace the overrides from ``path`` (CSV or TOML) in ``prices``; return how many rows."""
    rows = read_override_rows(path)
    minimums = read_minimum_rows(path)
    version = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    con.execute("begin")
    con.execute("delete from prices where source = ?", [str(path)])
    con.execute("delete from cache_minimums where source = ?", [str(path)])
    if rows:
        con.executemany(f"insert into prices values ({', '.join(['?'] * 17)})", [[*row, version] for row in rows])
    if minimums:
        con.executemany("insert into cache_minimums values (?, ?, ?, ?, ?, ?, ?)", [[*row, version] for row in minimums])
    con.execute("delete from model_prices")
    con.execute("commit")
    return len(rows)


def list_prices(con: duckdb.DuckDBPyConnection, model: str | None = None, snapshot: bool = False) -> list[dict]:
    """The overrides (and with ``snapshot`` the shipped prices: reconcile's corrections, then the
    genai-prices snapshot), optionally those whose model contains ``model``."""
    return records(con, """
        select provider, model, effective_from, effective_to, uncached_mtok, cache_read_mtok, cache_write_5m_mtok,
               cache_write_1h_mtok, output_mtok, source, source_version
        from prices
        where ($snapshot or source not in ($snapshot_source, $corrections))
          and ($model is null or contains(lower(model), lower($model)))
        order by source = $snapshot_source, source = $corrections, provider, model, effective_from nulls first""",
        {"snapshot": snapshot, "model": model, "snapshot_source": SNAPSHOT, "corrections": CORRECTIONS})


def remove_overrides(con: duckdb.DuckDBPyConnection, source: str | None = None, model: str | None = None,
                     provider: str | None = None) -> int:
    """Delete the overrides loaded from ``source``, or those of ``model`` (and ``provider``); return how many.

    Nothing matching is an error naming what is loaded, so a typo never passes for a removal. The
    shipped prices are not removable (an override wins over them).
    """
    where = ("source not in ($snapshot_source, $corrections) and ($source is null or source = $source) "
             "and ($model is null or model = $model) and ($provider is null or provider = $provider)")
    params = {"source": source, "model": model, "provider": provider, "snapshot_source": SNAPSHOT,
              "corrections": CORRECTIONS}
    count = con.execute(f"select count(*) from prices where {where}", params).fetchall()[0][0]
    if not count:
        loaded = [f"{r['model']} ({r['source']})" for r in list_prices(con)]
        raise BadInput(f"no price override matches {source or model!r}; loaded: {', '.join(loaded) or 'none'}. "
                       "See reconcile prices list.")
    con.execute("begin")
    if model is None and provider is None:  # a file removed: its minimum cacheable prompt lengths go with it
        con.execute("delete from cache_minimums where source = ?", [source])
    con.execute(f"delete from prices where {where}", params)
    con.execute("delete from model_prices")
    con.execute("commit")
    return count


def resolve(con: duckdb.DuckDBPyConnection, refresh: bool = True) -> int:
    """Resolve a price for every (provider, model, day) the model steps use; return how many are new. With
    ``refresh``, the kept run totals follow the prices now in force (the runs whose prices changed re-priced)."""
    ensure_snapshot(con)
    con.execute("delete from model_prices where matched_model is null")  # try the unpriced ones again
    missing = con.execute(
        """select distinct coalesce(s.provider, r.provider) as provider, coalesce(s.model, r.model) as model,
                  coalesce(s.started_at, r.started_at, now())::date as day
           from steps s join runs r using (run_id)
           where s.kind = 'model' and coalesce(s.model, r.model) is not null
           union
           select provider, model, bucket_start::date from usage_buckets where model is not null
           except select provider, model, day from model_prices"""
    ).fetchall()
    for provider, model, day in missing:  # per distinct model and day, never per step
        con.execute("insert into model_prices select ?, ?, ?, " + match_sql(con, provider, model, day),
                    [provider, model, day])
    if refresh:
        kept_totals.refresh(con)
    return len(missing)


_PRICE_COLUMNS = ", ".join([f"{b}_mtok" for b in BUCKETS] + ["tier_start"] + [f"tier_{b}_mtok" for b in BUCKETS])
NO_PRICE = "null, null, " + ", ".join(["null"] * 11) + ", null, null, null, null, null"


def match_sql(con: duckdb.DuckDBPyConnection, provider: str | None, model: str, day: dt.date,
              table: str = "prices", snapshot: bool = True) -> str:
    """The SELECT-list tail for one (provider, model, day): an override in ``table``, else (with
    ``snapshot``) genai-prices, else nothing."""
    in_period = f"(effective_from is null or effective_from <= DATE '{day}') and " \
                f"(effective_to is null or DATE '{day}' < effective_to)"
    override = con.execute(
        f"""select provider, model from {table}
            where source not in (?, ?) and (provider = '*' or provider = ?) and (model = '*' or starts_with(?, model))
              and {in_period}
            order by model <> '*' desc, length(model) desc, effective_from desc nulls last limit 1""",
        [*SHIPPED, provider, model]).fetchall()
    lookup = None
    if override:
        where = (f"source not in ('{SNAPSHOT}', '{CORRECTIONS}') and provider = " + string_literal(override[0][0])
                 + " and model = " + string_literal(override[0][1]))
        order = "effective_from desc nulls last"
    else:
        matched = _genai_match(provider, model) if snapshot else None
        if matched is None:
            return NO_PRICE
        where = f"source in ('{SNAPSHOT}', '{CORRECTIONS}') and provider = {string_literal(matched[0])} and model = {string_literal(matched[1])}"
        order = f"source = '{SNAPSHOT}', effective_from desc nulls last"  # a correction covering the day wins
        lookup = matched[2]
    row = con.execute(f"select provider, model, {_PRICE_COLUMNS}, source, source_version from {table} "
                      f"where {where} and {in_period} order by {order} limit 1").fetchall()
    if not row:
        return NO_PRICE
    minimum = cache_minimum(con, [row[0][0], provider], row[0][1], day)
    searches = web_search_price(row[0][0], row[0][1], day) if row[0][-2] in SHIPPED else None
    return ", ".join(value_literal(v, "decimal(18, 9)") for v in [*row[0], lookup, minimum, searches])


def web_search_price(provider: str, model: str, day: dt.date) -> Decimal | None:
    """What genai-prices says the model's hosted web search costs on ``day``, dollars per thousand searches (None: it
    does not say). A search is billed per use beside the tokens (Anthropic's web search tool, OpenAI's)."""
    from genai_prices import data_snapshot

    for found in data_snapshot.get_snapshot().providers:
        if found.id != provider:
            continue
        for entry in found.models:
            if entry.id != model:
                continue
            for start, end, price in _periods(entry.prices):
                if (start is None or start <= day) and (end is None or day < end):
                    value = getattr(price, "web_searches_kcount", None)
                    value = getattr(value, "base", value)
                    return None if value is None else _nine(Decimal(str(value)))
    return None


def cache_minimum(con: duckdb.DuckDBPyConnection, providers: list[str | None], model: str, day: dt.date) -> int | None:
    """The shortest prompt the price list's ``model`` (of one of ``providers``) caches on ``day``: a price file's
    entry before the shipped ones, then the longest model prefix, then the latest period. None: not known."""
    found = con.execute(
        r"""select min_tokens from cache_minimums
           where (provider = '*' or list_contains(?, provider))
             and starts_with(regexp_replace(?, '^(global|regional)\.anthropic\.', ''), model)
             and (effective_from is null or effective_from <= ?) and (effective_to is null or ? < effective_to)
           order by source = ?, length(model) desc, effective_from desc nulls last limit 1""",
        [[p for p in providers if p is not None], model, day, day, MINIMUMS]).fetchall()
    return found[0][0] if found else None


# Model ids as harnesses write them, reduced to what a price list knows (tried in order; the first
# that genai-prices matches wins, and the lookup is recorded in model_prices.lookup_model):
_RESOURCE_PATH = re.compile(r"^projects/[^/]+/locations/[^/]+/publishers/([^/]+)/models/([^/@]+)")  # Vertex AI
_BEDROCK = re.compile(r"^(?:(?:us|eu|apac|global|regional)\.)?(anthropic|meta|amazon|mistral|cohere|ai21|deepseek)"
                      r"\.(.+?)(?:-v\d+(?::\d+)?)?$")  # us.anthropic.claude-3-5-sonnet-20240620-v1:0
_ROUTERS = {"bedrock": "aws", "vertex_ai": "google", "vertex": "google", "gemini": "google", "models": None,
            "azure": "azure", "openai": "openai", "anthropic": "anthropic", "google": "google",
            "openrouter": "openrouter", "deepseek": "deepseek", "mistral": "mistral", "groq": "groq",
            "together": "together", "fireworks": "fireworks", "x-ai": "x-ai", "xai": "x-ai"}


MAX_ROUTING_PREFIXES = 4


def model_candidates(provider: str | None, model: str) -> list[tuple[str | None, str]]:
    """(provider hint, model id) pairs to look a model up by: as written, then normalised forms."""
    found = [(provider, model)]
    resource = _RESOURCE_PATH.match(model)
    if resource:
        found.append((resource.group(1), resource.group(2)))
    rest, hint = model, provider
    # routing prefixes: openrouter/anthropic/claude-3.5-sonnet, vertex_ai/gemini-2.5-pro — a few at most: an id
    # of thousands of slashes is no route, and a candidate per slash would make a hostile id cost its square
    for _ in range(MAX_ROUTING_PREFIXES):
        if "/" not in rest:
            break
        prefix, rest = rest.split("/", 1)
        hint = _ROUTERS.get(prefix.lower(), hint)
        found.append((hint, rest))
    for hint, name in list(found):
        bedrock = _BEDROCK.match(name)
        if bedrock:
            found += [("aws", name), (bedrock.group(1), bedrock.group(2))]
    for hint, name in list(found):
        bare = name.split("@", 1)[0]  # Vertex's claude-3-5-sonnet@20240620 (r"@.*$" is quadratic in "@@@…\n")
        bare = re.sub(r"-0\d\d$", "", bare)  # gemini-2.5-flash-001
        if bare != name:
            found.append((hint, bare))
    unique = []
    for pair in found:
        if pair not in unique:
            unique.append(pair)
    return unique


def _genai_match(provider: str | None, model: str) -> tuple[str, str, str | None] | None:
    """(provider id, model id, the normalised id it was found under, when not the id as written)."""
    from genai_prices import data_snapshot

    snapshot = data_snapshot.get_snapshot()
    for hint, name in model_candidates(provider, model):
        for provider_id in ([hint, None] if hint else [None]):
            try:
                found_provider, found_model = snapshot.find_provider_model(name, None, provider_id, None)
                return found_provider.id, found_model.id, (name if name != model else None)
            except (LookupError, ValueError):
                continue
    return None
