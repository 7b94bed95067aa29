"""PNG plots of a benchmark summary: the admission plane and accuracy against cost.

Each panel shows one suite and team size, one marker per method at its Average over
the suite's conditions (the rows :func:`readmit.bench.report.summarize` adds). The
plots never change a score: a marker sits at its exact value, and labels move
around it, not the other way round. matplotlib is imported only when a plot is drawn.
"""

import textwrap
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PLANE_FILE = "admission-plane.png"
COST_FILE = "accuracy-cost.png"


def plots(summary: Sequence[dict[str, Any]], out: Path) -> list[Path]:
    """The admission plane and accuracy against cost, as PNG files in ``out``.

    Both plot each method's Average over a suite's conditions (one panel per suite and
    team size); the per-condition scores are in the tables. The cost plot leaves out
    suites whose answer accuracy was not computed.
    """
    import matplotlib

    matplotlib.use("Agg")
    written = [_save(admission_figure(summary), out / PLANE_FILE)]
    cost = cost_figure(summary)
    if cost is not None:
        written.append(_save(cost, out / COST_FILE))
    return written


_LIMITS = (-8.0, 108.0)
"""Axis limits around the 0–100 scale, so a marker at 0 or 100 is drawn whole."""
_GOOD_FROM = 90.0
"""The shaded good corner of the admission plane starts here on both axes."""


def _panels(summary: Sequence[dict[str, Any]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Each (suite, team size)'s Average rows, one per method, sorted by method."""
    panels: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for entry in sorted(summary, key=lambda e: e["method"]):
        if entry["condition"] == "Average":
            panels[(entry["suite"], entry["team_size"])].append(entry)
    return dict(sorted(panels.items()))


def _grid(keys: Sequence[tuple[str, int]]) -> tuple[Any, dict[tuple[str, int], Any]]:
    """A figure with one panel per (suite, team size): suites across, team sizes down."""
    import matplotlib.pyplot as plt

    suites = sorted({s for s, _ in keys})
    teams = sorted({t for _, t in keys})
    fig, axes = plt.subplots(
        len(teams),
        len(suites),
        figsize=(4.6 * len(suites) + 0.4, 3.9 * len(teams) + 0.9),
        squeeze=False,
    )
    placed = {(s, t): axes[teams.index(t)][suites.index(s)] for s, t in keys}
    for row in axes:
        for ax in row:
            if ax not in placed.values():
                ax.set_visible(False)  # a suite not run at this team size
    return fig, placed


def admission_figure(summary: Sequence[dict[str, Any]]) -> Any:
    """VIA against IIR, a panel per suite: methods that tie share one labeled marker.

    Every marker is at its exact score, inside the 0–100 square; the methods at one
    point are named in one label, placed where it overlaps no other label or marker.
    """
    panels = _panels(summary)
    fig, axes = _grid(list(panels))
    for (suite, team), entries in panels.items():
        _plane(axes[(suite, team)], suite, team, entries)
    fig.suptitle(
        "Admission plane: each method's average over the suite's conditions "
        "(per-condition scores in results.md)\n"
        "Green corner = good: every still-valid item kept (VIA) and every stale item "
        "kept out (IIR). Methods at the same point share one marker.",
        fontsize=10,
    )
    fig.tight_layout()
    fig.canvas.draw()  # label placement measures text on the final layout
    for ax in axes.values():
        _place_labels(ax)
    return fig


def _plane(ax: Any, suite: str, team: int, entries: Sequence[dict[str, Any]]) -> None:
    ties: dict[tuple[float, float], list[str]] = defaultdict(list)
    for e in entries:
        ties[(round(100 * e["VIA"], 1), round(100 * e["IIR"], 1))].append(e["method"])
    _good_corner(ax)
    for n, ((x, y), methods) in enumerate(ties.items()):
        color = _GROUP_COLORS[n % len(_GROUP_COLORS)]
        ax.scatter([x], [y], s=45, color=color, zorder=3)
        leader = {"arrowstyle": "-", "color": color, "linewidth": 0.8, "shrinkB": 4}
        label = textwrap.fill(", ".join(methods), width=26)
        ax.annotate(label, (x, y), color=color, arrowprops=leader, **_LABEL_STYLE)
    ax.set(
        xlim=_LIMITS,
        ylim=_LIMITS,
        xticks=range(0, 101, 20),
        yticks=range(0, 101, 20),
        xlabel="VIA: valid state kept (%), higher is better",
        ylabel="IIR: stale state kept out (%), higher is better",
        title=f"{suite} (team of {team})",
    )
    ax.set_box_aspect(1)
    ax.grid(alpha=0.3)


def _good_corner(ax: Any) -> None:
    """Shade the corner where VIA and IIR are both high, and label it."""
    from matplotlib.patches import Rectangle

    side = _LIMITS[1] - _GOOD_FROM
    ax.add_patch(Rectangle((_GOOD_FROM, _GOOD_FROM), side, side, color="tab:green", alpha=0.15))
    ax.text(
        _LIMITS[1] - 1, _GOOD_FROM + 1, "good", ha="right", va="bottom", fontsize=7,
        color="darkgreen", fontweight="bold",
    )  # fmt: skip


_GROUP_COLORS = ("C0", "C1", "C4", "C5", "C3", "C9", "C8", "C7", "C6", "black")
"""One color per marker and its label (tab10 without its green, kept for the good corner)."""

_LABEL_STYLE: dict[str, Any] = {
    "xytext": (0, 0),
    "textcoords": "offset points",
    "fontsize": 7,
    "gid": "tie-label",
    "bbox": {"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.85},
    "zorder": 4,
}

_DIRECTIONS = (
    (-1, -1, "right", "top"),
    (1, 1, "left", "bottom"),
    (1, -1, "left", "top"),
    (-1, 1, "right", "bottom"),
    (0, -1, "center", "top"),
    (0, 1, "center", "bottom"),
    (-1, 0, "right", "center"),
    (1, 0, "left", "center"),
)
_SPOTS = tuple(
    ((dx * distance, dy * distance), ha, va)
    for distance in (10, 30)
    for dx, dy, ha, va in _DIRECTIONS
)
"""Where a label may sit around its marker (offset in points, alignment), in order of
preference: near first, then farther out (the leader line still joins them)."""


def _place_labels(ax: Any) -> None:
    """Move each tie label to the first spot inside ``ax`` that overlaps nothing placed."""
    from matplotlib.text import Text

    renderer = ax.figure.canvas.get_renderer()
    labels = [t for t in ax.texts if t.get_gid() == "tie-label"]
    taken = [_marker_box(ax, label.xy) for label in labels]
    taken += [t.get_window_extent(renderer) for t in ax.texts if t not in labels]
    for label in labels:
        fits = []
        for offset, ha, va in _SPOTS:
            label.set(position=offset, ha=ha, va=va)
            box = Text.get_window_extent(label, renderer)  # the text, not its leader line
            if _contains(ax.bbox, box):
                fits.append((offset, ha, va, box))
                if not any(box.overlaps(other) for other in taken):
                    break
        else:  # nothing fits without overlap: keep the first spot inside the panel
            fits = fits[:1]
        if fits:
            offset, ha, va, box = fits[-1]
            label.set(position=offset, ha=ha, va=va)
            taken.append(box)


def _marker_box(ax: Any, xy: tuple[float, float]) -> Any:
    from matplotlib.transforms import Bbox

    x, y = ax.transData.transform(xy)
    r = 5 * ax.figure.dpi / 72
    return Bbox.from_extents(x - r, y - r, x + r, y + r)


def _contains(outer: Any, inner: Any) -> bool:
    return bool(
        outer.x0 <= inner.x0
        and inner.x1 <= outer.x1
        and outer.y0 <= inner.y0
        and inner.y1 <= outer.y1
    )


_MARKERS = "osD^v<>phX*P"


def cost_figure(summary: Sequence[dict[str, Any]]) -> Any | None:
    """Answer accuracy against admission time, a panel per suite that has answer scores.

    ``None`` when no suite has them. The legend lists only methods that have a marker.
    """
    import matplotlib.pyplot as plt

    panels = {
        key: scored
        for key, entries in _panels(summary).items()
        if (scored := [e for e in entries if e["Overall"] is not None])
    }
    if not panels:
        return None
    methods = sorted({e["method"] for entries in panels.values() for e in entries})
    cmap = plt.get_cmap("tab10")
    style = {m: (_MARKERS[n % len(_MARKERS)], cmap(n % 10)) for n, m in enumerate(methods)}
    fig, axes = _grid(list(panels))
    for (suite, team), entries in panels.items():
        ax = axes[(suite, team)]
        for e in entries:
            marker, color = style[e["method"]]
            ax.scatter(  # hollow, so that markers at nearly the same point stay visible
                [max(e["ms_per_return"], 1e-3)],
                [100 * e["Overall"]],
                marker=marker,
                facecolors="none",
                edgecolors=[color],
                linewidths=1.5,
                s=60,
                label=e["method"],
            )
        ax.set(
            xscale="log",
            ylim=_LIMITS,
            yticks=range(0, 101, 20),
            xlabel="admission time per return (ms, log scale)",
            ylabel="Overall: answers right (%)",
            title=f"{suite} (team of {team})",
        )
        ax.set_box_aspect(1)
        ax.grid(alpha=0.3)
    shown: dict[str, Any] = {}
    for ax in axes.values():
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            shown.setdefault(label, handle)
    fig.suptitle(
        "Accuracy against cost: each method's average over the suite's conditions\n"
        "Top left is best: answers right, decided fast. Suites without answer scores "
        "are left out.",
        fontsize=10,
    )
    fig.tight_layout()
    fig.legend(
        shown.values(), shown.keys(), loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8
    )
    return fig


def _save(fig: Any, path: Path) -> Path:
    """Write ``path`` and free the figure."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path
