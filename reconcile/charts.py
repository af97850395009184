"""Charts as inline SVG, drawn by matplotlib: a report must open offline, with nothing fetched.

Text is drawn as paths (no font is referenced), the SVG's metadata block and namespace
declarations are dropped (HTML's parser does not need them, and a report carries no URL of any
kind), and the hash salt is fixed so the same data draws the same markup. Labels, legends and
titles are data (agent names, models, trace names): each is redacted and made literal before it
is drawn, mathtext is off (a ``$`` in a name is a dollar sign), and the comments matplotlib writes
beside each drawn string are dropped.
"""

from __future__ import annotations

import io
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .display import label  # noqa: E402
from .redact import redact  # noqa: E402

plt.rcParams.update({"text.parse_math": False, "svg.fonttype": "path", "svg.hashsalt": "reconcile", "font.size": 9,
                     "axes.spines.top": False, "axes.spines.right": False})
PALETTE = ["#2f6f9f", "#e08a2c", "#5a9e4b", "#b8474b", "#7b61a8", "#8c8c8c"]


def bar_chart(labels: list[str], series: dict[str, list[float | None]], title: str, unit: str = "$") -> str:
    """Grouped horizontal bars, one group per label, one bar per series; an unknown value is written "unknown"."""
    labels = [label(redact(text)) for text in labels]
    series = {label(redact(name), 30): values for name, values in series.items()}
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
    ax.xaxis.set_major_formatter(lambda value, _: f"{unit}{value:,.2f}" if unit == "$" else f"{value:,.0f}")
    if count > 1:
        ax.legend(frameon=False, loc="lower right")
    fig.tight_layout()
    return _svg(fig)


def _svg(fig) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    return re.sub(r'\s+version="1\.1"', "", svg)
