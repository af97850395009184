"""Seed 003 ("The Agent Loop, For Real"), its TypeScript translated to Python, journalled with reconcile.journal.

Translated line for line: ``runAgent`` (the guards in the seed's order — ``Date.now() > deadline``
(strictly after), ``steps >= maxSteps``, ``tokens >= maxTokens``, cancellation — then assemble,
call, journal the model step, ``end_turn`` → succeeded, validate (a schema failure is fed back and
costs a step, never retried), execute through the idempotency gate, observe a result bounded
head+tail, ``steps++``, then the no-progress detector), ``noProgress`` (the last six call hashes
minus allow-repeat ones; nothing under four; three of one hash, or A B A B), ``classify`` and
``step`` (transport: retry on the same context up to ``maxRetries``; rate limit: after one retry
switch to the fallback model and note it; invalid output: not a retry, fed back), and
``bounded`` (head and tail, never head only). The statuses are the seed's six.

Made deterministic: the model is a scripted fake (the same script served by the primary model
and, after a fallback, by the fallback model), ``Date.now()`` and ``sleep`` are a simulated clock,
nothing is awaited. Lines marked ``# journal:`` are the seed's ``journal.writeModelStep`` /
``journal.note`` and what its author writes besides; ``DECISION`` marks what the seed leaves open.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal

from conformance_support import SimClock
from reconcile.journal import Journal, RunJournal, ToolCall, estimate_tokens

Status = Literal["succeeded", "failed", "cancelled", "budget_exceeded", "timed_out", "stalled"]
ErrClass = Literal["transport", "rate_limit", "invalid_output", "tool_business"]

PRIMARY, FALLBACK = "claude-sonnet-4-5", "claude-haiku-4-5"
# the middleware's price snapshot, dollars per million tokens (input, output)
PRICES = {PRIMARY: (3.00, 15.00), FALLBACK: (1.00, 5.00)}


@dataclass
class Budgets:
    maxSteps: int = 25          # default 25
    maxTokens: int = 400_000    # default 400_000
    wallClockMs: int = 600_000  # default 600_000
    maxRetries: int = 3         # default 3, charged against maxTokens


# ---- the no-progress detector, exactly as written

def noProgress(hashes: list[str], allowRepeat: frozenset[str] | set[str] = frozenset(), *, repeats: int = 3) -> bool:
    # ``repeats`` is not in the seed (it is the literal 3); only the planted late-detector fault changes it
    recent = [h for h in hashes[-6:] if h not in allowRepeat]
    if len(recent) < 4:
        return False
    # (a) the same call three times
    counts: dict[str, int] = {}
    for h in recent:
        counts[h] = counts.get(h, 0) + 1
    for n in counts.values():
        if n >= repeats:
            return True
    # (b) oscillation: A B A B over the last four steps
    last4 = recent[-4:]
    if len(last4) == 4 and last4[0] == last4[2] and last4[1] == last4[3] and last4[0] != last4[1]:
        return True
    return False


def canonicalJson(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def hashCall(name: str, canonical_args: str) -> str:
    return hashlib.sha256(f"{name}\x1f{canonical_args}".encode()).hexdigest()


# ---- errors and their classes

class HttpError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class SchemaError(Exception):
    def __init__(self, message: str, schema: dict, path: str):
        super().__init__(message)
        self.schema, self.path = schema, path


def classify(e: BaseException) -> ErrClass:
    if isinstance(e, HttpError) and e.status == 429:
        return "rate_limit"
    if isinstance(e, HttpError) and e.status >= 500:
        return "transport"
    if isinstance(e, SchemaError):
        return "invalid_output"
    return "tool_business"


def backoffMs(attempt: int, *, min: int = 250) -> int:  # noqa: A002 (the seed's option name)
    return max(min, 250 * 2 ** attempt)


# ---- the model (scripted) and the tools (simulated)

@dataclass
class ModelResponse:
    stopReason: str                 # "end_turn" | "tool_use"
    text: str
    toolCall: dict | None           # {"name", "args"}
    usage: dict                     # {"inputTokens", "outputTokens"}
    model: str
    ms: float


class Script:
    """The conversation the fake model plays, shared by the primary and the fallback model.

    An item is ``("tool", name, args)``, ``("answer", text)`` or ``("fail", http_status)`` (that call
    fails; the next call takes the next item). Input tokens are the assembled context: the stable
    prefix plus 4 bytes a token of the history; output tokens are 250 a turn (the seed's cost model).
    """

    def __init__(self, items: list[tuple], then: tuple | None = None):
        self.items, self.then = list(items), then


class FakeModel:
    def __init__(self, id: str, script: Script, clock: SimClock, latency: float = 2.0):
        self.id, self.script, self.clock, self.latency = id, script, clock, latency

    def call(self, messages: dict, tools: list[str]) -> ModelResponse:
        item = self.script.items.pop(0) if self.script.items else self.script.then
        self.clock.sleep(self.latency)
        if item[0] == "fail":
            raise HttpError(item[1], {429: "rate limited", 529: "overloaded"}.get(item[1], "server error"))
        usage = {"inputTokens": context_tokens(messages), "outputTokens": 250}
        if item[0] == "answer":
            return ModelResponse("end_turn", item[1], None, usage, self.id, self.latency * 1000)
        return ModelResponse("tool_use", "", {"name": item[1], "args": item[2]}, usage, self.id, self.latency * 1000)


STABLE_PREFIX_TOKENS = {"system": 800, "fewShot": 700, "task": 400}


def context_tokens(messages: dict) -> int:
    return (STABLE_PREFIX_TOKENS["system"] + sum(t["schema_tokens"] for t in messages["tools"])
            + STABLE_PREFIX_TOKENS["fewShot"] + STABLE_PREFIX_TOKENS["task"]
            + sum(estimate_tokens(canonicalJson(item)) for item in messages["history"]))


@dataclass
class ToolDef:
    name: str
    schema: dict                  # {"required": [field, ...]}
    run: Any                      # (args) -> str, may raise
    side_effect: bool = False
    allowRepeat: bool = False     # the opt-out the seed asks for: a polling tool repeats by design
    schema_tokens: int = 150


def world_tools(clock: SimClock) -> dict[str, ToolDef]:
    def search_docs(args):
        clock.sleep(0.3)
        return f"3 hits for {args['q']!r}: retry.md#backoff, errors.md#529, limits.md"

    def fetch_page(args):
        clock.sleep(0.4)
        return f"<page {args['url']}>\n" + "".join(f"paragraph {i} of {args['url']}: detail.\n" for i in range(30))

    def fetch_long(args):  # a 40k-token body: bounded head+tail before it enters the history
        clock.sleep(0.8)
        return f"<export {args['url']}>\n" + "row,value,comment\n" * 9_000 + "ERROR: row 8999 failed checksum\n"

    def slow_fetch(args):  # a slow external dependency
        clock.sleep(200.0)
        return f"<page {args['url']}> (slow)"

    def poll_job(args):
        clock.sleep(5.0)
        return f"job {args['job_id']}: running"

    def send_email(args):
        clock.sleep(0.6)
        return json.dumps({"ok": True, "message_id": "msg_" + hashlib.sha1(args["to"].encode()).hexdigest()[:8]})

    defs = [ToolDef("search_docs", {"required": ["q"]}, search_docs),
            ToolDef("fetch_page", {"required": ["url"]}, fetch_page),
            ToolDef("fetch_long", {"required": ["url"]}, fetch_long),
            ToolDef("slow_fetch", {"required": ["url"]}, slow_fetch),
            ToolDef("poll_job", {"required": ["job_id"]}, poll_job, allowRepeat=True),
            ToolDef("send_email", {"required": ["to", "body"]}, send_email, side_effect=True)]
    return {d.name: d for d in defs}


# ---- the run's context

@dataclass
class Faults:
    """Planted defects. All off: the seed's harness as written."""

    ignore_final: bool = False       # the loop takes an answer without a tool call for a progress note
    ledger_drift: bool = False       # tokens += inputTokens only
    lose_result_at: int = 0          # this tool result (1-based) is never journalled
    late_detector: bool = False      # noProgress needs four repeats, not three
    misread_final: bool = False      # the answer taken for a progress note, and journalled so (not final)
    unchanged_retry: bool = False    # an invalid output is tried again without the error fed back: the same input


@dataclass
class RunCtx:
    runId: str
    budgets: Budgets
    model: FakeModel
    fallbackModel: FakeModel
    toolSubset: dict[str, ToolDef]
    clock: SimClock
    journal: Journal
    systemPrompt: str = "You are a support engineer's research agent."
    fewShot: str = "(two worked examples)"
    task: str = "Find out why our 529 retries double-send emails, and tell the on-call."
    history: list[dict] = field(default_factory=list)
    cancelAt: int | None = None      # the operator cancels once this many steps are done
    faults: Faults = field(default_factory=Faults)
    allowRepeat: set[str] = field(default_factory=set)
    # how the harness words what it journals: the recipe's error_class alone on an invalid output, or with its text
    error_text: bool = True
    # the failure matrix's policy for a 529 ("fallback route after one retry, not four"); False: the code's, which
    # retries any 5xx on the same route up to maxRetries
    overload_fallback: bool = False
    run: RunJournal | None = None
    idempotency: dict[str, str] = field(default_factory=dict)  # key -> stored response (the unique index)
    results_journalled: int = 0

    @property
    def schemas(self) -> dict[str, dict]:
        return {name: d.schema for name, d in self.toolSubset.items()}


# ---- the loop, translated

def runAgent(ctx: RunCtx) -> Status:
    journal.start(ctx)
    deadline = ctx.clock.millis() + ctx.budgets.wallClockMs
    steps = 0
    tokens = 0
    callHashes: list[str] = []
    while True:
        if ctx.clock.millis() > deadline:
            return finish(ctx, "timed_out", steps=steps, tokens=tokens)
        if steps >= ctx.budgets.maxSteps:
            return finish(ctx, "budget_exceeded", steps=steps, tokens=tokens)
        if tokens >= ctx.budgets.maxTokens:
            return finish(ctx, "budget_exceeded", steps=steps, tokens=tokens)
        if isCancelled(ctx, steps):
            return finish(ctx, "cancelled", steps=steps, tokens=tokens)
        # 1. assemble — stable parts first, so the cached prefix survives
        messages = assemble(system=ctx.systemPrompt, tools=ctx.toolSubset, fewShot=ctx.fewShot, task=ctx.task,
                            history=ctx.history)
        # 2. call — DECISION: through the seed's ``step`` (its retry policy), on the same messages
        try:
            res = step(ctx, messages)
        except Exception as e:  # DECISION: a rethrown error (retries spent) ends the run as failed
            return finish(ctx, "failed", f"the model call failed after its retries: {e}", steps=steps, tokens=tokens)
        tokens += res.usage["inputTokens"] + (0 if ctx.faults.ledger_drift else res.usage["outputTokens"])
        step_row = journal.writeModelStep(ctx, steps, res, messages)
        if res.stopReason == "end_turn" and not (ctx.faults.ignore_final or ctx.faults.misread_final):
            return finish(ctx, "succeeded", res.text, steps=steps, tokens=tokens)
        if res.toolCall is None:  # FAULT (ignore_final): the answer is taken for a progress note
            ctx.history.append({"role": "assistant", "content": res.text})
            continue  # no tool ran: the loop's `steps` (tool results) does not grow
        # 3+4. parse and validate — a schema failure is NOT a retry
        call = res.toolCall
        check = validate(call, ctx.schemas.get(call["name"]))
        if not check["ok"]:
            error = toolError(error=check["error"], expected_schema=ctx.schemas.get(call["name"]),
                              offending_field=check["path"])
            if not ctx.faults.unchanged_retry:  # FAULT switch: the next turn gets no new information
                ctx.history.append(error)
            journal.writeToolStep(ctx, step_row.calls[0], "invalid_args", canonicalJson(error), error=check["error"])
            steps += 1  # costs a step, deliberately
            continue  # next turn, more information
        # 5. execute — through the idempotency gate, never directly
        out = executeTool(ctx, step_row.calls[0], call)
        # 6. observe — bounded at ingestion, full body in the journal
        ctx.history.append(bounded(out, maxTokens=2000, keep="head+tail"))
        steps += 1
        # no-progress detector
        h = hashCall(call["name"], canonicalJson(call["args"]))
        callHashes.append(h)
        if ctx.toolSubset[call["name"]].allowRepeat:
            # DECISION: the seed calls noProgress(callHashes) with the default empty set, yet says the
            # tool definition needs an opt-out flag; the opt-out is passed here as the hashes of
            # calls to tools flagged allowRepeat.
            ctx.allowRepeat.add(h)
        if noProgress(callHashes, ctx.allowRepeat, repeats=4 if ctx.faults.late_detector else 3):
            return finish(ctx, "stalled", steps=steps, tokens=tokens)


def step(ctx: RunCtx, messages: dict, attempt: int = 0) -> ModelResponse:
    try:
        return callAndValidate(ctx, messages, attempt)
    except Exception as e:
        cls = classify(e)
        journal.writeFailedCall(ctx, messages, e, cls, attempt)  # DECISION: failed attempts are journalled too
        if cls == "transport":
            if attempt >= ctx.budgets.maxRetries:
                raise
            # the failure matrix (provider 529 mid-run): fall back after one retry, as for a rate limit
            if ctx.overload_fallback and attempt >= 1 and getattr(e, "status", None) == 529 \
                    and ctx.model is not ctx.fallbackModel:
                ctx.model = ctx.fallbackModel
                journal.note(ctx, "fallback_route", ctx.fallbackModel.id)
            sleep(ctx, backoffMs(attempt))  # same context: correct here
            return step(ctx, messages, attempt + 1)
        if cls == "rate_limit":
            if attempt >= 1:  # fall back fast, not slow
                ctx.model = ctx.fallbackModel  # policy table decides this
                journal.note(ctx, "fallback_route", ctx.fallbackModel.id)
            sleep(ctx, backoffMs(attempt, min=1000))
            return step(ctx, messages, attempt + 1)
        # invalid_output and tool_business are handled in the loop (validate, executeTool) in this
        # harness: callAndValidate only calls the model, so nothing else reaches here
        raise


def callAndValidate(ctx: RunCtx, messages: dict, attempt: int) -> ModelResponse:
    res = ctx.model.call(messages, list(ctx.toolSubset))
    res.attempt = attempt + 1
    return res


def sleep(ctx: RunCtx, ms: int) -> None:
    ctx.clock.sleep(ms / 1000)


def isCancelled(ctx: RunCtx, steps: int) -> bool:
    return ctx.cancelAt is not None and steps >= ctx.cancelAt


def assemble(*, system, tools, fewShot, task, history) -> dict:
    return {"system": system, "tools": [{"name": t.name, "schema": t.schema, "schema_tokens": t.schema_tokens}
                                        for t in tools.values()],
            "fewShot": fewShot, "task": task, "history": list(history)}


def validate(call: dict, schema: dict | None) -> dict:
    if schema is None:
        return {"ok": False, "error": f"unknown tool {call['name']!r}", "path": "name"}
    for name in schema["required"]:
        if name not in call["args"]:
            return {"ok": False, "error": f"missing required field {name!r}", "path": f"args.{name}"}
    return {"ok": True}


def toolError(**fields: Any) -> dict:
    return {"role": "tool", "ok": False, **fields}


def executeTool(ctx: RunCtx, entry: ToolCall, call: dict) -> str:
    tool = ctx.toolSubset[call["name"]]
    t0, m0 = ctx.clock.utc(), ctx.clock.monotonic()
    started = None
    if tool.side_effect:
        if entry.idempotency_key in ctx.idempotency:  # the key exists: return the stored response
            return ctx.idempotency[entry.idempotency_key]
        started = ctx.run.tool_started(entry, ts=t0)  # journal: the key persisted before the side effect
    try:
        out, status, error = tool.run(call["args"]), "ok", None
    except Exception as e:  # a tool business error is information for the model, not an exception for us
        out, status, error = canonicalJson({"ok": False, "detail": str(e)}), "error", str(e)
    if tool.side_effect:
        ctx.idempotency[entry.idempotency_key] = out
    journal.writeToolStep(ctx, entry, status, out, error=error, started=started, ts=t0,
                          ms=(ctx.clock.monotonic() - m0) * 1000)
    return out


def bounded(out: str, *, maxTokens: int, keep: str) -> dict:
    assert keep == "head+tail"
    if estimate_tokens(out) <= maxTokens:
        return {"role": "tool", "content": out}
    half = maxTokens * 4 // 2 - 40
    cut = estimate_tokens(out) - maxTokens
    return {"role": "tool", "content": out[:half] + f"\n[… {cut} tokens cut; full body in the journal …]\n" + out[-half:]}


def finish(ctx: RunCtx, status: Status, text: str | None = None, *, steps: int, tokens: int) -> Status:
    journal.finish(ctx, status, text, steps=steps, tokens=tokens)
    return status


# ---- the journal the seed writes to (``journal.writeModelStep``, ``journal.note``), on reconcile.journal

class _Journal:
    def start(self, ctx: RunCtx) -> None:
        b = ctx.budgets
        ctx.run = ctx.journal.start_run(
            ctx.runId, agent="seed003", model=ctx.model.id, provider="anthropic", task_class="support_research",
            limits={"max_steps": b.maxSteps, "max_tokens": b.maxTokens, "max_wall_seconds": b.wallClockMs / 1000,
                    "max_retries": b.maxRetries, "result_bound_tokens": 2000},
            tools=[{"name": t.name, "side_effect": t.side_effect, "allow_repeat": t.allowRepeat,
                    "schema_tokens": t.schema_tokens} for t in ctx.toolSubset.values()],
            catalogue_tokens=sum(t.schema_tokens for t in ctx.toolSubset.values()),
            loop_detector={"kind": "calls_window", "limit": 3, "window": 6},
            fallback_model=ctx.fallbackModel.id, fence="seed003")  # its deadline: Date.now() > deadline

    def writeModelStep(self, ctx: RunCtx, steps: int, res: ModelResponse, messages: dict):
        # The seed passes its step counter; the journal numbers its own lines (idx), so it is not needed.
        inp, outp = PRICES[res.model]
        calls = [(res.toolCall["name"], res.toolCall["args"])] if res.toolCall else []
        schema_error = None
        if res.toolCall:  # DECISION: a call that fails its schema marks its model step invalid_output
            check = validate(res.toolCall, ctx.schemas.get(res.toolCall["name"]))
            schema_error = None if check["ok"] else check["error"]
        return ctx.run.model_step(
            usage={"input_uncached": res.usage["inputTokens"], "output": res.usage["outputTokens"]},
            ms=res.ms, ts=ctx.clock.utc() - _seconds(res.ms), model=res.model, input_messages=messages,
            tool_calls=calls, text=res.text or None, final=res.stopReason == "end_turn" and not ctx.faults.misread_final,
            finish_reason=res.stopReason, attempt=getattr(res, "attempt", 1),
            cost_micros=round(res.usage["inputTokens"] * inp + res.usage["outputTokens"] * outp),
            error=schema_error if ctx.error_text else None, error_class="invalid_output" if schema_error else None)

    def writeFailedCall(self, ctx: RunCtx, messages: dict, e: Exception, cls: ErrClass, attempt: int) -> None:
        latency = ctx.model.latency
        ctx.run.model_step(usage={}, ms=latency * 1000, ts=ctx.clock.utc() - _seconds(latency * 1000),
                           model=ctx.model.id, input_messages=messages, attempt=attempt + 1, error=str(e),
                           error_class=cls if cls in ("transport", "rate_limit", "invalid_output") else None)

    def writeToolStep(self, ctx: RunCtx, entry: ToolCall, status: str, out: str, *, error: str | None = None,
                      started: int | None = None, ts=None, ms: float = 0) -> None:
        ctx.results_journalled += 1
        if ctx.results_journalled == ctx.faults.lose_result_at:  # FAULT switch: this result is never journalled
            return
        cut = estimate_tokens(out) > 2000
        # the full body goes to the journal; what entered the context is the bounded text
        ctx.run.tool_step(entry, status=status, result=out, error=error, started=started, ts=ts, ms=ms,
                          bounded=cut, result_tokens=estimate_tokens(bounded(out, maxTokens=2000,
                                                                             keep="head+tail")["content"]))

    def note(self, ctx: RunCtx, what: str, detail: str) -> None:
        assert what == "fallback_route"
        ctx.run.event("fallback", detail=detail)

    def finish(self, ctx: RunCtx, status: Status, text: str | None, *, steps: int, tokens: int) -> None:
        if status == "cancelled":
            ctx.run.event("cancel", detail="cancelled by the operator")
        # The seed's vocabulary is its status; it has no separate stop string, so the status is both.
        # The ledger is the loop's two counters as it keeps them. Its `steps` grows by one per tool result
        # or fed-back schema error (journalled as an invalid_args tool step) — one result a step, as the
        # seed's loop asks for one call a step — so it is the journal's tool_results, not ledger.steps
        # (model calls: the final answer and retried calls are model calls it does not count).
        # tokens: input + output of every answered call, retries included.
        ctx.run.end(status, status=status, final_output=text, ledger={"tool_results": steps, "tokens": tokens})


def _seconds(ms: float) -> timedelta:
    return timedelta(milliseconds=ms)


journal = _Journal()


def new_ctx(run_id: str, script: Script, clock: SimClock, jr: Journal, **fields: Any) -> RunCtx:
    return RunCtx(runId=run_id, budgets=fields.pop("budgets", Budgets()), model=FakeModel(PRIMARY, script, clock),
                  fallbackModel=FakeModel(FALLBACK, script, clock), toolSubset=world_tools(clock), clock=clock,
                  journal=jr, **fields)
