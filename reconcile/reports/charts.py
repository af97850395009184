"""Charts as inline SVG, drawn by matplotlib: a report must open offline, with nothing fetched.

Text is text (``<text>`` in the page's own sans-serif: a reader can select and copy a figure, a
screen reader can read it; no font file is fetched or embedded), the SVG's metadata block and namespace
declarations are dropped (HTML's parser does not need them, and a report carries no URL of any
kind), and the hash salt is fixed so the same data draws the same markup. Labels, legends and
titles are data (agent names, models, trace names): each is redacted and made literal before it
is drawn, mathtext is off (a ``$`` in a name is a dollar sign), and the comments matplotlib writes
beside each drawn string are dropped.
"""

from __future__ import annotations

import io
import logging
import re

# matplotlib logs to stderr when its cache folder cannot be written (cron with a read-only HOME) or while it
# builds its font cache: chatter, not a problem with the night. A failure still raises.
logging.getLogger("matplotlib").setLevel(logging.ERROR)
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from reconcile.display import label  # noqa: E402
from reconcile.redact import redact  # noqa: E402

plt.rcParams.update({"text.parse_math": False, "svg.fonttype": "none", "svg.hashsalt": "reconcile", "font.size": 9,
                     "font.family": "sans-serif",
                     "axes.spines.top": False, "axes.spines.right": False})
LEGEND_CHARS = 60  # a legend entry is read whole ("the same calls without the cache"); past this, a name is cut
PALETTE = ["#2f6f9f", "#e08a2c", "#5a9e4b", "#b8474b", "#7b61a8", "#8c8c8c"]


def bar_chart(labels: list[str], series: dict[str, list[float | None]], title: str, unit: str = "$",
              xlabel: str | None = None) -> str:
    """Grouped horizontal bars, one group per label, one bar per series; an unknown value is written "unknown".

    The axis says what the bars measure (``xlabel``; US dollars by default when ``unit`` is "$").
    """
    labels = [label(redact(text)) for text in labels]
    series = {label(redact(name), LEGEND_CHARS): values for name, values in series.items()}
    title = label(redact(title), 90)
    height = max(1.8, 0.38 * len(labels) * max(1, len(series)) + 0.9)
    fig, ax = plt.subplots(figsize=(7.2, height))
    count = len(series)
    width = 0.8 / max(count, 1)
    for i, (name, values) in enumerate(series.items()):
        positions = [k + i * width - 0.4 + width / 2 for k in range(len(labels))]
        ax.barh(positions, [0 if v is None else v for v in values], height=width, label=name,
                color=PALETTE[i % len(PALETTE)])
        for position, value in zip(positions, values):
            if value is None:
                ax.text(0, position, " unknown", va="center", fontsize=8, color="#555555")
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_title(title, loc="left")
    ax.xaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10], min_n_ticks=3))
    ax.xaxis.set_major_formatter(_money_ticks if unit == "$" else (lambda value, _: f"{value:,.0f}"))
    ax.set_xlim(left=0)
    ax.set_xlabel(label(redact(xlabel or ("US dollars" if unit == "$" else "")), 60), loc="left", color="#555555")
    if count > 1:  # below the bars, so it never covers one
        ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(0, -0.12 if len(labels) > 2 else -0.25),
                  ncol=min(count, 4))
    return _svg(fig)


def _money_ticks(value: float, _position) -> str:
    """Dollar ticks with as many decimals as the scale needs: $0.25, $1.50, $1,200."""
    if value == 0:
        return "$0"
    return f"${value:,.0f}" if value >= 100 else f"${value:,.2f}" if value >= 0.01 else f"${value:,.4f}"


def share_chart(labels: list[str], series: dict[str, list[float]], title: str,
                colours: dict[str, str] | None = None, xlabel: str = "share") -> str:
    """One stacked bar per label (a night), its segments the series' shares (0..1) in order; legend below."""
    labels = [label(redact(text)) for text in labels]
    title = label(redact(title), 90)
    fig, ax = plt.subplots(figsize=(7.2, max(1.6, 0.34 * len(labels) + 1.3)))
    left = [0.0] * len(labels)
    for i, (name, values) in enumerate(series.items()):
        colour = (colours or {}).get(name, PALETTE[i % len(PALETTE)])
        ax.barh(range(len(labels)), values, left=left, height=0.7, label=label(redact(name), LEGEND_CHARS), color=colour)
        left = [a + b for a, b in zip(left, values)]
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
    ax.xaxis.set_major_formatter(lambda value, _: f"{value:.0%}")
    ax.set_xlabel(label(redact(xlabel), 60), loc="left", color="#555555")
    ax.set_title(title, loc="left")
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(0, -0.18 if len(labels) > 2 else -0.35),
              ncol=min(len(series), 4))
    return _svg(fig)


def trend_chart(labels: list[str], values: list[float | None], baseline: float | None, title: str,
                formatter=None) -> str:
    """A small chart of one figure over recent windows (bars), the last one marked, its baseline dashed."""
    labels = [label(redact(text)) for text in labels]
    title = label(redact(title), 90)
    fig, ax = plt.subplots(figsize=(7.2, 1.9))
    shown = [0 if v is None else v for v in values]
    colours = [PALETTE[0]] * (len(shown) - 1) + [PALETTE[3]]
    ax.bar(range(len(shown)), shown, color=colours, width=0.6)
    if baseline is not None:
        ax.axhline(baseline, color="#555555", linestyle="--", linewidth=1, label="baseline (median of the nights before)")
        ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(0, -0.3), ncol=1)
    ax.set_xticks(range(len(labels)), labels, fontsize=7)
    ax.yaxis.set_major_locator(MaxNLocator(nbins=4, min_n_ticks=2))
    if formatter is not None:
        ax.yaxis.set_major_formatter(lambda value, _: formatter(value))
    ax.set_ylim(bottom=0)
    ax.set_title(title, loc="left")
    return _svg(fig)


def _svg(fig) -> str:
    buffer = io.StringIO()
    # "tight" measures every label, tick and legend drawn, so none is cut at the figure's edge
    fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight", pad_inches=0.08)
    plt.close(fig)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    return re.sub(r'\s+version="1\.1"', "", svg)
