"""The scripted fake model: a list of turns — tool calls, then a final answer — each with its usage.

    model = ScriptedModel([call("read_file", path="a.py"), answer("done")])
    model(transcript)   # {"tool": "read_file", "args": {"path": "a.py"}, "usage": {"prompt": 412, "completion": 60}}

Called the way seed 000's ``run_loop`` calls its model: ``model(transcript)`` returns a dict with
``tool`` and ``args``, or ``final`` and ``text``, and ``usage`` as ``{"prompt", "completion"}``.
A harness with another model interface wraps ``model.next_turn(...)``, which returns the same turn
as a ``Turn``. The usage is what the "provider" reports: the prompt is the size of what was sent
(4 bytes a token of every text in it, plus a fixed system prompt) unless the caller says how big
its context is (``prompt_tokens=``); the completion is the turn's own. Every answered call is told
to the ``listeners`` (the fake provider's record, and the kit's journal when the kit journals).

A script that runs out repeats ``then`` — block one's stubs are called "forever" — but never
without end: past ``cap`` calls the model raises ``FenceNeverStopped``, a ``BaseException`` so
that a harness's ``except Exception`` (seed 000's "a raising tool is data") cannot swallow it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reconcile.journal import estimate_tokens

MODEL = "claude-sonnet-4-5"  # a priced model, so the store can cost the runs like real ones
PROVIDER = "anthropic"
SYSTEM_TOKENS = 400
DEFAULT_CAP = 200
WRAP_UP_TEXT = "Stopped by a budget. Established: what the tools returned. Next: a person looks."


class FenceNeverStopped(BaseException):
    """The loop called the model ``cap`` times and its fence had still not stopped it."""

    def __init__(self, calls: int, scenario: str):
        super().__init__(f"the fence never stopped the loop after {calls} calls ({scenario})")
        self.calls, self.scenario = calls, scenario


@dataclass(frozen=True)
class TurnSpec:
    """One scripted turn: a tool call (``tool``, ``args``) or a final answer (``text``)."""

    tool: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict)
    text: str | None = None
    completion: int = 60
    latency: float = 1.0  # seconds of the clock the call takes

    @property
    def final(self) -> bool:
        return self.tool is None


def call(tool: str, /, completion: int = 60, latency: float = 1.0, **args: Any) -> TurnSpec:
    """A turn that asks for ``tool(**args)``."""
    return TurnSpec(tool=tool, args=args, completion=completion, latency=latency)


def answer(text: str, completion: int = 120, latency: float = 1.0) -> TurnSpec:
    """A turn that is the model's final answer."""
    return TurnSpec(text=text, completion=completion, latency=latency)


@dataclass(frozen=True)
class Turn:
    """What the model answered on one call, with what the provider reports for it."""

    number: int  # 1-based: the model's n-th call
    tool: str | None
    args: Mapping[str, Any]
    text: str | None
    final: bool
    prompt_tokens: int
    completion_tokens: int
    request_id: str
    started_at: datetime
    seconds: float  # how long the call took on the clock
    wrap_up: bool = False  # asked without tools (seed 001's wrap-up turn): an answer, not a final one

    def as_seed000(self) -> dict[str, Any]:
        """The call as seed 000's ``run_loop`` reads it."""
        usage = {"prompt": self.prompt_tokens, "completion": self.completion_tokens}
        if self.tool is None:
            return {"final": self.final, "text": self.text, "usage": usage, "request_id": self.request_id}
        return {"tool": self.tool, "args": dict(self.args), "usage": usage, "request_id": self.request_id}


Listener = Callable[[Turn], None]


class ScriptedModel:
    """``model(transcript)`` → the next scripted turn as a seed 000 dict. See the module docstring."""

    def __init__(self, script: Iterable[TurnSpec] = (), *, then: TurnSpec | Callable[[int], TurnSpec] | None = None,
                 clock: Any = None, cap: int = DEFAULT_CAP, name: str = MODEL, provider: str = PROVIDER,
                 scenario: str = "scripted", run_id: str | None = None,
                 wrap_up_text: str = WRAP_UP_TEXT):
        self.script = list(script)
        self.then = then
        self.clock = clock
        self.cap = cap
        self.name, self.provider, self.scenario = name, provider, scenario
        self.run_id = run_id or f"block-one-{scenario}"  # a run id a self-journalling harness may use
        self.wrap_up_text = wrap_up_text
        self.calls = 0
        self.turns: list[Turn] = []
        self.listeners: list[Listener] = []

    def __call__(self, transcript: Any = None, *, prompt_tokens: int | None = None, tools: bool = True) -> dict:
        return self.next_turn(transcript, prompt_tokens=prompt_tokens, tools=tools).as_seed000()

    def next_turn(self, sent: Any = None, *, prompt_tokens: int | None = None, tools: bool = True) -> Turn:
        """The next turn. ``sent``: what the harness sends (its size is the prompt), or ``prompt_tokens``;
        ``tools=False``: a tool-free turn (a wrap-up), answered with ``wrap_up_text``."""
        if self.calls >= self.cap:
            raise FenceNeverStopped(self.calls, self.scenario)
        self.calls += 1
        spec = self._next_spec() if tools else answer(self.wrap_up_text)
        prompt = prompt_tokens if prompt_tokens is not None else SYSTEM_TOKENS + size_in_tokens(sent)
        started = self.clock.utc() if self.clock is not None else datetime.now().astimezone()
        if self.clock is not None:
            self.clock.sleep(spec.latency)
        turn = Turn(self.calls, spec.tool, dict(spec.args), spec.text, spec.final and tools, prompt, spec.completion,
                    f"req_{self.run_id}_{self.calls}", started, spec.latency, wrap_up=not tools)
        self.turns.append(turn)
        for listener in self.listeners:
            listener(turn)
        return turn

    def _next_spec(self) -> TurnSpec:
        if self.script:
            return self.script.pop(0)
        if self.then is None:
            raise IndexError(f"the script of {self.scenario!r} ran out after {self.calls - 1} calls and has no `then`")
        return self.then(self.calls) if callable(self.then) else self.then


def size_in_tokens(value: Any, depth: int = 0) -> int:
    """Tokens of every text in what a harness sends (messages as dicts, dataclasses or objects with ``content``)."""
    if value is None or depth > 50:
        return 0
    if isinstance(value, str):
        return estimate_tokens(value)
    if isinstance(value, bytes):
        return -(-len(value) // 4)
    if isinstance(value, Mapping):
        return sum(size_in_tokens(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(size_in_tokens(v, depth + 1) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(size_in_tokens(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
    content = getattr(value, "content", None)
    if content is not None:
        return size_in_tokens(content, depth + 1)
    return 0 if isinstance(value, (int, float, bool)) else estimate_tokens(str(value))
