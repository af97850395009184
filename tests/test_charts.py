"""Charts: every label inside the drawing, ticks at round steps, unknown never drawn as $0."""

from __future__ import annotations

import re

from reconcile.reports.charts import _money_ticks, bar_chart, share_chart


def _size(svg: str) -> tuple[float, float]:
    width, height = re.search(r'<svg[^>]*width="([\d.]+)pt"[^>]*height="([\d.]+)pt"', svg).groups()
    return float(width), float(height)


def test_a_long_label_widens_the_drawing_instead_of_being_cut():
    short = bar_chart(["a"], {"spend": [1.0]}, "Spend")
    long = bar_chart(["claude-sonnet-4-5-20250929 via bedrock eu-west-1"], {"spend": [1.0]}, "Spend")
    assert _size(long)[0] > _size(short)[0] + 100  # measured into the figure, not clipped at its edge


def test_legends_sit_below_the_bars_inside_the_drawing():
    one = bar_chart(["a", "b", "c"], {"cost": [1.0, 2.0, 3.0]}, "By model")
    two = bar_chart(["a", "b", "c"], {"cost": [1.0, 2.0, 3.0], "without cache": [2.0, 3.0, 4.0]}, "By model")
    assert _size(two)[1] > _size(one)[1]  # the legend adds height below rather than covering a bar
    shares = share_chart(["2026-11-27", "2026-11-28"], {"succeeded": [0.8, 0.9], "failed": [0.2, 0.1]}, "Stop reasons")
    assert _size(shares)[1] > 100 and "<text" in shares and "<path id=\"DejaVu" not in shares  # text as text: selectable, no glyph paths


def test_money_ticks_use_as_many_decimals_as_the_scale_needs():
    assert [_money_ticks(v, None) for v in (0, 0.25, 1.5, 12.0, 1200.0, 0.005)] == [
        "$0", "$0.25", "$1.50", "$12.00", "$1,200", "$0.0050"]
