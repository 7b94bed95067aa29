"""Policy at the edge: every setting's type and range, unknown names, and what overrides make."""

import math
from dataclasses import fields
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from builders import KEY, T0
from readmit.decide import decide
from readmit.errors import ConfigError
from readmit.events import Assert, ItemDraft, ReturnRequest
from readmit.model import Agent
from readmit.policy import MAX_JUDGMENT_SECONDS, MAX_VIEW_TTL, OnIncomplete, Policy
from readmit.signing import HmacSha256Signer
from readmit.store import open_store

COUNTS = ["max_items", "max_chars", "max_item_chars", "batch_size"]
COUNTS += ["scan_top_k", "scan_embed_top_k", "scan_per_item"]
LIMITS = ["max_judgments", "max_judgment_tokens"]
SHARES = ["gamma", "rho", "threshold"]
FLAGS = ["fill", "implicit", "complete_view_gate", "source_bound_readmission"]
OVERRIDE_NAMES = {"view_ttl_seconds" if f.name == "view_ttl" else f.name for f in fields(Policy)}

GOOD: dict[str, list[Any]] = {
    **{name: [1, 7, 10**6] for name in COUNTS},
    **{name: [None, 1, 500] for name in LIMITS},
    **{name: [0, 0.0, 0.5, 1, 1.0] for name in SHARES},
    **{name: [True, False] for name in FLAGS},
    "selection": ["obligations", "relevance"],
    "on_incomplete": ["block", "reset", OnIncomplete.RESET],
    "view_ttl_seconds": [1, 0.5, 3600, MAX_VIEW_TTL.total_seconds()],
    "max_judgment_seconds": [None, 0.25, 1, 30.0, MAX_JUDGMENT_SECONDS],
}
BAD: dict[str, list[Any]] = {
    **{name: [0, -1, True, False, 1.0, "3", None, [1]] for name in COUNTS},
    **{name: [0, -5, True, 2.0, "3", {}] for name in LIMITS},
    **{name: [-0.1, 1.01, math.nan, math.inf, -math.inf, True, "0.5", None] for name in SHARES},
    **{name: [1, 0, "true", None, "yes"] for name in FLAGS},
    "selection": ["random", "", None, 1, ["obligations"]],
    "on_incomplete": ["shrug", "", None, 1, True],
    "view_ttl_seconds": [0, -1, 1e300, math.nan, math.inf, "3600", None, True, 10**400],
    "max_judgment_seconds": [0, -1, 0.0, 86_400.5, math.nan, math.inf, "3", True, [1]],
}
SAYS = {
    **dict.fromkeys(COUNTS, "must be a positive integer"),
    **dict.fromkeys(LIMITS, "must be a positive integer or null"),
    **dict.fromkeys(SHARES, "must be a number in [0, 1]"),
    **dict.fromkeys(FLAGS, "must be true or false"),
    "selection": "must be 'obligations' or 'relevance'",
    "on_incomplete": "must be 'block' or 'reset'",
    "view_ttl_seconds": "must be a number of seconds in (0, 31622400]",
    "max_judgment_seconds": "must be a number of seconds in (0, 86400] or null",
}


def test_the_tables_name_every_setting() -> None:
    assert set(GOOD) == set(BAD) == set(SAYS) == OVERRIDE_NAMES


@pytest.mark.parametrize(("name", "value"), [(n, v) for n, values in GOOD.items() for v in values])
def test_a_good_override_sets_its_setting(name: str, value: Any) -> None:
    policy = Policy().with_overrides({name: value})

    if name == "view_ttl_seconds":
        assert policy.view_ttl == timedelta(seconds=value)
    else:
        assert getattr(policy, name) == value


@pytest.mark.parametrize(
    ("name", "value"),
    [pytest.param(n, v, id=f"{n}={v!r}"[:60]) for n, values in BAD.items() for v in values],
)
def test_a_bad_override_is_a_config_error_naming_the_setting(name: str, value: Any) -> None:
    with pytest.raises(ConfigError) as raised:
        Policy().with_overrides({name: value})

    assert str(raised.value) == f"invalid policy: {name} {SAYS[name]}"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        pytest.param(n, v, id=f"{n}={v!r}")
        for n, values in BAD.items()
        if n != "view_ttl_seconds"
        for v in values
    ],
)
def test_a_bad_setting_is_refused_when_a_policy_is_made(name: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=f"^invalid policy: {name} "):
        Policy(**{name: value})


@pytest.mark.parametrize(
    "ttl", [timedelta(0), -timedelta(seconds=1), MAX_VIEW_TTL + timedelta(seconds=1), 3600]
)
def test_a_bad_view_ttl_is_refused_when_a_policy_is_made(ttl: Any) -> None:
    with pytest.raises(ConfigError, match="view_ttl must be positive and at most a year"):
        Policy(view_ttl=ttl)


def test_unknown_names_are_all_named_and_nothing_is_applied() -> None:
    with pytest.raises(ConfigError) as raised:
        Policy().with_overrides({"speed": 2, "gamma": 0.5, "colour": "red"})

    assert str(raised.value) == "unknown policy field(s): colour, speed"


def test_the_dataclass_name_of_the_ttl_is_not_an_override() -> None:
    with pytest.raises(ConfigError) as raised:
        Policy().with_overrides({"view_ttl": 600})

    assert str(raised.value).endswith("view_ttl (did you mean 'view_ttl_seconds'?)")


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"max_itmes": 10}, "max_itmes (did you mean 'max_items'?)"),
        ({"policy": {"max_items": 10}}, "policy (write the settings at the top level, with no"),
    ],
)
def test_an_unknown_name_says_what_was_probably_meant(given: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError) as raised:
        Policy().with_overrides(given)

    assert str(raised.value).startswith(f"unknown policy field(s): {said}")


def test_every_bad_setting_is_named_at_once() -> None:
    with pytest.raises(ConfigError) as raised:
        Policy().with_overrides({"gamma": 2, "max_items": 0, "fill": "no"})

    message = str(raised.value)
    assert all(name in message for name in ("gamma", "max_items", "fill"))


@pytest.mark.parametrize("overrides", [[], "gamma", None, 1])
def test_overrides_that_are_not_an_object_are_refused(overrides: Any) -> None:
    with pytest.raises(ConfigError, match="object of policy settings"):
        Policy().with_overrides(overrides)


def test_overrides_keep_every_other_setting() -> None:
    base = Policy(max_items=3, gamma=0.5)

    changed = base.with_overrides({"rho": 0.25})

    assert changed == Policy(max_items=3, gamma=0.5, rho=0.25)
    assert Policy().with_overrides({}) == Policy()


def test_a_policy_round_trips_through_its_json() -> None:
    policy = Policy(max_items=5, threshold=0.8, on_incomplete=OnIncomplete.RESET, max_judgments=9)

    assert Policy().with_overrides(policy.to_json()) == policy


def test_equal_settings_make_equal_policies_with_one_digest() -> None:
    whole = Policy(gamma=1, rho=0, threshold=1)
    written = Policy().with_overrides({"gamma": 1, "rho": 0, "threshold": 1})

    assert whole == written == Policy(gamma=1.0, rho=0.0, threshold=1.0)
    assert whole.digest == written.digest == Policy(gamma=1.0, rho=0.0, threshold=1.0).digest


@pytest.mark.parametrize("name", ["gamma", "rho", "threshold"])
def test_a_negative_zero_share_is_zero_and_digests_as_zero(name: str) -> None:
    """-0.0 == 0.0, so the two policies are one, whichever of them is digested first."""
    negative = Policy().with_overrides({name: -0.0})
    zero = Policy().with_overrides({name: 0.0})

    assert negative.digest == zero.digest
    assert math.copysign(1.0, negative.to_json()[name]) == 1.0


def test_on_incomplete_given_as_text_is_the_member() -> None:
    policy = Policy(on_incomplete="reset")  # type: ignore[arg-type]

    assert policy.on_incomplete is OnIncomplete.RESET
    assert policy.to_json()["on_incomplete"] == "reset"


def test_ablations_still_switch_one_mechanism_off() -> None:
    assert Policy().ablate("I").implicit is False
    assert Policy().ablate("OAS").selection == "relevance"
    with pytest.raises(ConfigError, match="unknown ablation"):
        Policy().ablate("XYZ")


def test_a_returns_own_overrides_apply_to_a_library_decision_and_are_checked(
    tmp_path: Path,
) -> None:
    """As a scenario's return applies them (`replay`); they were ignored by `decide`."""
    store = open_store(f"sqlite:///{tmp_path / 'p.db'}")
    store.create_workspace("w", [Agent(id="A1", principal="f", role="r")])
    drafts = [ItemDraft(id=f"i{n}", text=f"Item {n} holds.") for n in range(5)]
    store.append(
        "w", [Assert(id=f"e{n}", at=T0, author="A1", item=d) for n, d in enumerate(drafts)]
    )
    store.depart("w", "A1", T0)
    at = T0 + timedelta(hours=1)

    def decided(policy: Any) -> Any:
        request = ReturnRequest(id="r", at=at, agent="A1", task="t", purpose="p", policy=policy)
        return decide(
            store, "w", request, policy=Policy(), verifier=None, signer=HmacSha256Signer(KEY)
        )

    try:
        one = decided((("max_items", 1),))
        with pytest.raises(ConfigError, match="max_itemz"):
            decided({"max_itemz": 1})
    finally:
        store.close()

    assert len(one.decision.items) == 1
    assert one.record["thresholds"]["max_items"] == 1
