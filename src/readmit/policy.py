"""Policy: the method's knobs (γ, ρ, B_n, B_c, τ, on_incomplete) as one frozen value."""

from dataclasses import asdict, dataclass, replace
from datetime import timedelta
from enum import StrEnum
from typing import Any, Literal

from readmit.canonical import digest
from readmit.errors import ConfigError

SelectionMode = Literal["obligations", "relevance"]


class OnIncomplete(StrEnum):
    """What to do when the selected set does not cover the obligations (TRACE §3.4)."""

    BLOCK = "block"
    """Withhold admission until sufficient evidence arrives."""
    RESET = "reset"
    """Return with no inherited memory."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """Admission settings for one return."""

    max_items: int = 32
    """B_n: item-count budget of the Return View."""
    max_chars: int = 8192
    """B_c: character budget of the Return View."""
    max_item_chars: int = 2048
    """Per-item size budget (gate); longer items are ``over_item_budget``."""
    gamma: float = 1.0
    """γ: required obligation coverage Cov(S)."""
    rho: float = 1.0
    """ρ: required critical-dependency coverage Crit(S)."""
    threshold: float = 0.65
    """τ: minimum verifier confidence to accept an implicit invalidation."""
    on_incomplete: OnIncomplete = OnIncomplete.BLOCK
    fill: bool = True
    """After covering obligations, fill the remaining budgets with the newest eligible items."""
    implicit: bool = True
    """Ablation switch: run implicit invalidation (scanner + verifier)."""
    selection: SelectionMode = "obligations"
    """Ablation switch: ``obligations`` (TRACE §3.4) or ``relevance`` (rank by overlap with the
    open work, then recency, no reserved structure)."""
    complete_view_gate: bool = True
    """Ablation switch: withhold views whose coverage falls short of γ and ρ."""
    source_bound_readmission: bool = True
    """Ablation switch: readmit only private memories whose source is in the view."""
    batch_size: int = 4
    """Later observations per verifier call for one target item (bounded batches)."""
    scan_top_k: int = 8
    """How many best BM25 matches the scanner proposes per later observation."""
    scan_embed_top_k: int = 4
    """How many nearest items by embedding it proposes (when an embedder is configured)."""
    scan_per_item: int = 16
    """At most this many later observations are proposed against one item."""
    max_judgments: int | None = None
    """Verifier calls one return may make (each judges one item against at most
    ``batch_size`` observations); ``None``: four per item the view can hold
    (``4 × max_items``). Items the selector wants after the budget is spent are withheld
    as ``unscreened``; cached verdicts count too, so a decision never depends on what a
    cache happens to hold."""
    max_judgment_tokens: int | None = None
    """LLM tokens one return may spend on judgments (``None``: no limit but the calls)."""
    view_ttl: timedelta = timedelta(hours=1)
    """How long an issued Return View stays valid."""

    @property
    def digest(self) -> str:
        """The tagged digest of every setting: a signed view names the policy that made it."""
        return digest(self.to_json())

    def to_json(self) -> dict[str, Any]:
        """Every setting as JSON, ``view_ttl`` as ``view_ttl_seconds`` (what overrides take)."""
        values = asdict(self)
        values["view_ttl_seconds"] = values.pop("view_ttl").total_seconds()
        values["on_incomplete"] = str(self.on_incomplete)
        return values

    def __post_init__(self) -> None:
        problems = [
            *_positive(max_items=self.max_items, max_chars=self.max_chars),
            *_positive(max_item_chars=self.max_item_chars, batch_size=self.batch_size),
            *_positive(scan_top_k=self.scan_top_k, scan_embed_top_k=self.scan_embed_top_k),
            *_positive(scan_per_item=self.scan_per_item),
            *_positive_or_none(
                max_judgments=self.max_judgments, max_judgment_tokens=self.max_judgment_tokens
            ),
            *_unit(gamma=self.gamma, rho=self.rho, threshold=self.threshold),
        ]
        flags = ("fill", "implicit", "complete_view_gate", "source_bound_readmission")
        problems += [f"{f} must be true or false" for f in flags if not _is_bool(getattr(self, f))]
        if self.selection not in ("obligations", "relevance"):
            problems.append("selection must be 'obligations' or 'relevance'")
        if not timedelta(0) < self.view_ttl <= MAX_VIEW_TTL:
            problems.append("view_ttl must be positive and at most a year")
        if problems:
            raise ConfigError("invalid policy: " + "; ".join(problems))

    @property
    def judgment_calls(self) -> int:
        """The verifier calls one return may make (``max_judgments`` or its default)."""
        return self.max_judgments if self.max_judgments is not None else 4 * self.max_items

    @classmethod
    def paper(cls) -> "Policy":
        """The paper's settings: γ = ρ = 1, τ = 0.65, an eight-item view (appendix C.6)."""
        return cls(max_items=8, max_chars=4096)

    def ablate(self, name: str) -> "Policy":
        """This policy without one TRACE mechanism (paper §4 ablations).

        ``I`` (implicit invalidation), ``OAS`` (obligation-aware selection, replaced
        by relevance ranking), ``CVG`` (complete-view gate), ``SBPR`` (source-bound
        private readmission).

        Raises:
            ConfigError: for an unknown ablation name.
        """
        switches = {
            "I": {"implicit": False},
            "OAS": {"selection": "relevance"},
            "CVG": {"complete_view_gate": False},
            "SBPR": {"source_bound_readmission": False},
        }
        if name not in switches:
            raise ConfigError(f"unknown ablation {name!r} (known: {', '.join(switches)})")
        return replace(self, **switches[name])  # type: ignore[arg-type]

    def with_overrides(self, overrides: dict[str, Any]) -> "Policy":
        """Return a copy with scenario-style overrides applied (unknown names are errors)."""
        known = {
            "max_items",
            "max_chars",
            "max_item_chars",
            "gamma",
            "rho",
            "threshold",
            "on_incomplete",
            "fill",
            "implicit",
            "selection",
            "complete_view_gate",
            "source_bound_readmission",
            "batch_size",
            "scan_top_k",
            "scan_embed_top_k",
            "scan_per_item",
            "max_judgments",
            "max_judgment_tokens",
            "view_ttl_seconds",
        }
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ConfigError(f"unknown policy field(s): {', '.join(unknown)}")
        values = dict(overrides)
        if "view_ttl_seconds" in values:
            values["view_ttl"] = _ttl(values.pop("view_ttl_seconds"))
        if "on_incomplete" in values:
            try:
                values["on_incomplete"] = OnIncomplete(values["on_incomplete"])
            except ValueError:
                raise ConfigError("on_incomplete must be 'block' or 'reset'") from None
        try:
            return replace(self, **values)
        except TypeError as exc:
            raise ConfigError(f"invalid policy override: {exc}") from exc


MAX_VIEW_TTL = timedelta(days=366)
"""The longest a view may ever stay valid, whatever a policy asks (servers cap it lower)."""


def _ttl(seconds: object) -> timedelta:
    """``view_ttl_seconds`` as a duration: a number of seconds in (0, one year]."""
    most = MAX_VIEW_TTL.total_seconds()
    # Compared, never converted first: NaN fails every comparison, and a huge integer
    # would overflow a float or a timedelta.
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 < seconds <= most:
        raise ConfigError(f"view_ttl_seconds must be a number of seconds in (0, {most:.0f}]")
    return timedelta(seconds=seconds)


def _positive(**values: int) -> list[str]:
    return [f"{n} must be a positive integer" for n, v in values.items() if not _is_int(v) or v < 1]


def _positive_or_none(**values: int | None) -> list[str]:
    return _positive(**{n: v for n, v in values.items() if v is not None})


def _unit(**values: float) -> list[str]:
    return [f"{n} must be a number in [0, 1]" for n, v in values.items() if not _in_unit(v)]


def _is_bool(value: object) -> bool:
    return isinstance(value, bool)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _in_unit(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1
