"""Policy: the method's knobs (γ, ρ, B_n, B_c, τ, on_incomplete) as one frozen value.

Each setting's type says what it may hold (strict: no bools for numbers, no strings
for numbers, no NaN); pydantic checks a policy when it is made and when overrides
(a scenario's ``policy``, the server's ``--policy`` file) are applied, so the field
list is written once, here.
"""

from dataclasses import asdict, dataclass, fields, replace
from datetime import timedelta
from difflib import get_close_matches
from enum import StrEnum
from functools import lru_cache
from typing import Annotated, Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError, create_model

from readmit.canonical import digest
from readmit.errors import ConfigError

SelectionMode = Literal["obligations", "relevance"]

MAX_VIEW_TTL = timedelta(days=366)
"""The longest a view may ever stay valid, whatever a policy asks (servers cap it lower)."""
MAX_JUDGMENT_SECONDS = 86_400.0
"""The most verifier time a policy may give one return (a day: beyond it, set none)."""


class OnIncomplete(StrEnum):
    """What to do when the selected set does not cover the obligations (TRACE §3.4)."""

    BLOCK = "block"
    """Withhold admission until sufficient evidence arrives."""
    RESET = "reset"
    """Return with no inherited memory."""


@dataclass(frozen=True, slots=True)
class _Says:
    """What a setting must be, as its error message says it."""

    text: str


_Count = Annotated[int, Field(ge=1), _Says("must be a positive integer")]
_Limit = Annotated[Annotated[int, Field(ge=1)] | None, _Says("must be a positive integer or null")]
_Seconds = Annotated[
    Annotated[float, Field(gt=0, le=MAX_JUDGMENT_SECONDS, allow_inf_nan=False)] | None,
    _Says(f"must be a number of seconds in (0, {MAX_JUDGMENT_SECONDS:.0f}] or null"),
]
_Share = Annotated[float, Field(ge=0, le=1), _Says("must be a number in [0, 1]")]
_Flag = Annotated[bool, _Says("must be true or false")]
_Selection = Annotated[SelectionMode, _Says("must be 'obligations' or 'relevance'")]
_OnIncomplete = Annotated[OnIncomplete, Strict(False), _Says("must be 'block' or 'reset'")]
"""Not strict: a string (``"block"``) names the member."""
_TTL = Annotated[
    timedelta,
    Field(gt=timedelta(0), le=MAX_VIEW_TTL),
    _Says("must be positive and at most a year"),
]
_TTL_SECONDS = Annotated[
    float,
    Field(gt=0, le=MAX_VIEW_TTL.total_seconds(), allow_inf_nan=False),
    _Says(f"must be a number of seconds in (0, {MAX_VIEW_TTL.total_seconds():.0f}]"),
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """Admission settings for one return."""

    max_items: _Count = 32
    """B_n: item-count budget of the Return View."""
    max_chars: _Count = 8192
    """B_c: character budget of the Return View."""
    max_item_chars: _Count = 2048
    """Per-item size budget (gate); longer items are ``over_item_budget``."""
    gamma: _Share = 1.0
    """γ: required obligation coverage Cov(S)."""
    rho: _Share = 1.0
    """ρ: required critical-dependency coverage Crit(S)."""
    threshold: _Share = 0.65
    """τ: minimum verifier confidence to accept an implicit invalidation."""
    on_incomplete: _OnIncomplete = OnIncomplete.BLOCK
    fill: _Flag = True
    """After covering obligations, fill the remaining budgets with the newest eligible items."""
    implicit: _Flag = True
    """Ablation switch: run implicit invalidation (scanner + verifier)."""
    selection: _Selection = "obligations"
    """Ablation switch: ``obligations`` (TRACE §3.4) or ``relevance`` (rank by overlap with the
    open work, then recency, no reserved structure)."""
    complete_view_gate: _Flag = True
    """Ablation switch: withhold views whose coverage falls short of γ and ρ."""
    source_bound_readmission: _Flag = True
    """Ablation switch: readmit only private memories whose source is in the view."""
    batch_size: _Count = 4
    """Later observations per verifier call for one target item (bounded batches)."""
    scan_top_k: _Count = 8
    """How many best BM25 matches the scanner proposes per later observation."""
    scan_embed_top_k: _Count = 4
    """How many nearest items by embedding it proposes (when an embedder is configured)."""
    scan_per_item: _Count = 16
    """At most this many later observations are proposed against one item."""
    max_judgments: _Limit = None
    """Verifier calls one return may make (each judges one item against at most
    ``batch_size`` observations); ``None``: four per item the view can hold
    (``4 × max_items``). Items the selector wants after the budget is spent are withheld
    as ``unscreened``, up to `unscreened_limit`, after which it stops; cached verdicts
    count too, so a decision never depends on what a cache happens to hold."""
    max_judgment_tokens: _Limit = None
    """LLM tokens one return may spend on judgments (``None``: no limit but the calls)."""
    max_judgment_seconds: _Seconds = None
    """Seconds one return may spend waiting on verifier (and dependency-scan) calls, and
    in a service on its workspace's turn (returns of a workspace take turns); a call
    starts only while some are left, and is not cut short (the verifier's own timeout
    bounds it). ``None``: no limit but the calls. With a limit, what a return
    screens depends on the verifier's speed, so a replay may screen more or less; what
    it did not get to is ``unscreened``, and a later return screens it."""
    view_ttl: _TTL = timedelta(hours=1)
    """How long an issued Return View stays valid."""

    @property
    def digest(self) -> str:
        """The tagged digest of every setting: a signed view names the policy that made it."""
        return _digest(self)

    def to_json(self) -> dict[str, Any]:
        """Every setting as JSON, ``view_ttl`` as ``view_ttl_seconds`` (what overrides take)."""
        values = asdict(self)
        values["view_ttl_seconds"] = values.pop("view_ttl").total_seconds()
        values["on_incomplete"] = str(self.on_incomplete)
        return values

    def __post_init__(self) -> None:
        # Checked and normalized (an int γ becomes a float), so equal policies digest alike.
        values = _checked(_FIELDS, {f.name: getattr(self, f.name) for f in fields(self)})
        for name, value in values.items():
            if isinstance(value, float):
                value += 0.0  # -0.0 == 0.0, so the two must digest alike too
            object.__setattr__(self, name, value)

    @property
    def judgment_calls(self) -> int:
        """The verifier calls one return may make (``max_judgments`` or its default)."""
        return self.max_judgments if self.max_judgments is not None else 4 * self.max_items

    @property
    def walk_steps(self) -> int:
        """The steps one return may take to see what restored a statement (1,024 per call).

        A judged observation that put an item in a withdrawn statement's place is followed
        along what replaced that item, to see if a later one restores the statement
        (`readmit.admission.invalidation.narrowed.Steps`); each statement of the withdrawn
        words, read to see if one restates them for the item's readers, is a step too.
        Past this many steps the budget is spent, as past its calls: the items after are
        ``unscreened``. An item begun with steps left finishes, as a call under way does.
        """
        return 1024 * self.judgment_calls

    @property
    def unscreened_limit(self) -> int:
        """The items one return may withhold as ``unscreened`` (four per view item).

        Once the judgment budget is spent, the selector goes on down its order for items
        no later event could be proposed against (they need no judgment), withholding
        the others. After this many it stops, and the rest are ``not_selected``: without
        a bound, a return to a store whose every item was touched made an exclusion, and
        a view entry, for each of its candidates (at 100k items, a 20 MB view).
        """
        return 4 * self.max_items

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
        """Return a copy with scenario-style overrides applied.

        The names are the fields', but ``view_ttl_seconds`` (a number) for ``view_ttl``.

        Raises:
            ConfigError: naming every unknown name, or every setting of the wrong type
                or out of range.
        """
        values = _checked(_OVERRIDES, overrides)
        if "view_ttl_seconds" in values:
            values["view_ttl"] = timedelta(seconds=values.pop("view_ttl_seconds"))
        return replace(self, **values)


def _model(name: str, hints: dict[str, Any]) -> type[BaseModel]:
    definitions: dict[str, Any] = {field: (hint, None) for field, hint in hints.items()}
    config = ConfigDict(strict=True, extra="forbid")
    model: type[BaseModel] = create_model(name, __config__=config, **definitions)
    return model


def _says(hint: Any) -> str:
    return next(m.text for m in hint.__metadata__ if isinstance(m, _Says))


_HINTS = get_type_hints(Policy, include_extras=True)
_FIELDS = _model("PolicyFields", {f.name: _HINTS[f.name] for f in fields(Policy)})
_OVERRIDES = _model(
    "PolicyOverrides",
    {
        ("view_ttl_seconds" if f.name == "view_ttl" else f.name): (
            _TTL_SECONDS if f.name == "view_ttl" else _HINTS[f.name]
        )
        for f in fields(Policy)
    },
)
_SAYS = {name: _says(hint) for name, hint in _HINTS.items()} | {
    "view_ttl_seconds": _says(_TTL_SECONDS)
}


def _checked(model: type[BaseModel], values: object) -> dict[str, Any]:
    """The given settings, validated by ``model`` (only those given).

    Raises:
        ConfigError: for unknown names (all named) or bad values (each with what it must be).
    """
    if not isinstance(values, dict):
        raise ConfigError("invalid policy: expected an object of policy settings")
    try:
        checked = model.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(_problems(exc, list(model.model_fields))) from None
    return {name: getattr(checked, name) for name in checked.model_fields_set}


def _problems(error: ValidationError, known: list[str]) -> str:
    unknown, bad = [], []
    for problem in error.errors():
        name = str(problem["loc"][0]) if problem["loc"] else "policy"
        if problem["type"] == "extra_forbidden":
            unknown.append(name)
        elif name not in bad:
            bad.append(name)
    if unknown:
        hinted = (_hinted(name, known) for name in sorted(unknown))
        return f"unknown policy field(s): {', '.join(hinted)}"
    return "invalid policy: " + "; ".join(f"{name} {_SAYS[name]}" for name in bad)


def _hinted(name: str, known: list[str]) -> str:
    """An unknown setting's name, with what was probably meant of the ``known`` ones."""
    if name == "policy":
        return "policy (write the settings at the top level, with no [policy] table or key)"
    close = get_close_matches(name, known, n=1)
    return f"{name} (did you mean {close[0]!r}?)" if close else name


@lru_cache(maxsize=256)
def _digest(policy: Policy) -> str:
    """`Policy.digest`, once per distinct policy (every return signs one)."""
    return digest(policy.to_json())
