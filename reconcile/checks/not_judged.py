"""What the checks could not judge, said in a few lines (``reconcile check`` and ``morning``; ``-v`` has each check's)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reconcile.checks.runner import CheckResult


def not_judged_summary(results: list[CheckResult]) -> list[str]:
    """What the checks could not judge, in a few lines: one a format (the checks needing facts it does not
    record), then one a reason shared by checks (a setting left out, facts these runs lack)."""
    lacking: dict[str, tuple[int, list[str]]] = {}
    other: dict[str, tuple[list[str], dict[str, int]]] = {}
    for result in results:
        for gap in result.not_judged:
            if gap.format_lacks:
                runs, names = lacking.setdefault(gap.source, (0, []))
                lacking[gap.source] = (max(runs, gap.count), names + [result.name] * (result.name not in names))
            else:
                names, counts = other.setdefault(gap.reason, ([], {}))
                names += [result.name] * (result.name not in names)
                counts[f"{gap.source} {gap.unit}s"] = max(counts.get(f"{gap.source} {gap.unit}s", 0), gap.count)
    lines = [f"{len(names)} check(s) need facts the {source} format does not record ({runs} run(s)): "
             f"{', '.join(names)}; docs/formats.md lists what each format records"
             for source, (runs, names) in sorted(lacking.items())]
    lines += [f"{', '.join(names)}: not judged for {', '.join(f'{n} {what}' for what, n in counts.items())}: {reason}"
              for reason, (names, counts) in other.items()]
    return lines
