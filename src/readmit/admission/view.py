"""Stage 5, the signed Return View: build, sign, verify (TRACE §3.5, appendix C.4).

A view binds the selected items to one return cycle, principal, role, task and
epoch, and names (by digest, under the signature) the policy it was made under.
It lists the exclusions the agent may see, so it knows what went stale; items
the agent may not read never appear in it, not even by id.

`VerifiedView` can only be made by `verify_view`, so nothing can readmit
private memory from a view whose signature, digests and expiry were not checked.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from readmit.admission.context import ReturnContext
from readmit.admission.coverage import Coverage, Selection, measure
from readmit.admission.entries import entry_digest, item_entry
from readmit.admission.gates import apply_gates
from readmit.admission.hidden import hidden_ids, without
from readmit.admission.memo import keep
from readmit.canonical import canonical_json, json_string
from readmit.clock import format_time, naive, parse_time
from readmit.errors import InvalidInput, ViewRejected
from readmit.policy import Policy
from readmit.reasons import Exclusion, Reason
from readmit.signing import Signer

VIEW_FORMAT = "readmit.view/1"
_BINDING = ("cycle", "workspace", "agent", "principal", "role", "task", "purpose", "epoch")


def exclusion_json(e: Exclusion, hidden: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The wire shape of one exclusion.

    With the ids its agent may not see (``hidden``), for the decision record: the events
    of `Exclusion.sighted` among them are listed (``sighted``), for `redact` to name.
    """
    out: dict[str, Any] = {
        "item": e.item,
        "reason": str(e.reason),
        "stage": str(e.stage),
        "evidence": list(e.evidence),
    }
    if e.detail:
        out["detail"] = e.detail
    if e.confidence is not None:
        out["confidence"] = e.confidence
    if hidden and (sighted := [x for x in e.sighted if x in hidden and x in e.evidence]):
        out["sighted"] = sighted
    return out


def _draft(
    ctx: ReturnContext, selection: Selection, exclusions: Sequence[Exclusion], policy: Policy
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The unsigned Return View of the selected set, and its lists' elements as canonical JSON.

    The lists are the item entries (``items``) and the exclusions shown (``excluded``).
    """
    who = ctx.returner
    entries = [item_entry(item) for item in selection.items]
    view = {
        "format": VIEW_FORMAT,
        "cycle": ctx.cycle,
        "workspace": ctx.workspace,
        "agent": who.agent,
        "principal": who.principal,
        "role": who.role,
        "task": who.task,
        "purpose": who.purpose,
        "epoch": ctx.epoch,
        "departure_epoch": ctx.departure.epoch,
        "policy": policy.digest,
        "issued_at": format_time(who.at),
        "expires_at": format_time(_expires(ctx, policy, selection)),
        "items": [entry for entry, _ in entries],
        "coverage": {
            "obligations": selection.coverage.obligations,
            "critical": selection.coverage.critical,
        },
    }
    view["excluded"], excluded = _visible(exclusions, hidden_ids(ctx, exclusions))
    return view, {"items": [text for _, text in entries], "excluded": excluded}


def _visible(
    exclusions: Sequence[Exclusion], hidden: frozenset[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """`redact` of the exclusions' wire form, each built once, and each one's canonical JSON.

    An exclusion the agent sees whole has its JSON remembered (`_EXCLUDED`): explicit
    invalidation hands every return the same exclusion of an item for the same link.
    """
    shown: list[dict[str, Any]] = []
    texts: list[str] = []
    for e in exclusions:
        if e.item in hidden or e.reason is Reason.NOT_SELECTED:
            continue
        if hidden.isdisjoint(e.evidence):
            entry = exclusion_json(e)
            known = _EXCLUDED.get(id(e))
            if known is None or known[0] is not e:
                known = keep(_EXCLUDED, id(e), (e, canonical_json(entry)), _EXCLUDED_LIMIT)
            texts.append(known[1])
        else:
            entry = without(exclusion_json(e, hidden), hidden)
            texts.append(canonical_json(entry))
        shown.append(entry)
    return shown, texts


_EXCLUDED: dict[int, tuple[Exclusion, str]] = {}
"""Each exclusion's canonical JSON, by identity (the exclusion is kept with it)."""
_EXCLUDED_LIMIT = 1 << 17


def _expires(ctx: ReturnContext, policy: Policy, selection: Selection) -> datetime:
    """`view_expiry`, or sooner: when the first of the view's items or their premises ends.

    The premises to the end of each chain, in C or outside it: what rests on a premise
    falls when it ends (`Validity.ended`), and a view that outlived one served it (a
    review: a premise only another principal reads ended before the view).
    """
    ends: list[datetime] = []
    seen: set[str] = set()
    todo = [i.id for i in selection.items]
    while todo:
        item_id = todo.pop()
        if item_id in seen:
            continue
        seen.add(item_id)
        if (item := ctx.item_or_premise(item_id)) is not None:
            if item.validity.valid_to is not None:
                ends.append(item.validity.valid_to)
            todo += item.depends_on
    return min([view_expiry(ctx.returner.at, policy), *ends])


def view_expiry(at: datetime, policy: Policy) -> datetime:
    """When a view issued at ``at`` expires (`InvalidInput` past the year 9999)."""
    try:
        return at + policy.view_ttl
    except OverflowError:
        late = f"a view issued at {format_time(at)} would expire after the year 9999"
        raise InvalidInput(late) from None


def _unsigned(view: Mapping[str, Any]) -> bytes:
    return canonical_json({k: v for k, v in view.items() if k != "signature"}).encode("utf-8")


def _joined(view: Mapping[str, Any], lists: Mapping[str, Sequence[str]]) -> bytes:
    """`_unsigned` of an unsigned ``view``, given some of its lists as their elements' JSON.

    ``lists`` maps a key of ``view`` to the canonical JSON of each element of its list, in
    order; the rest of the view is serialized around them. The item entries hold the
    items' texts, most of a view's bytes, and `item_entry` remembers each one's JSON; a
    busy workspace's view lists thousands of exclusions, whose JSON `_visible` remembers.
    """
    parts = [
        json_string(key)
        + ":"
        + ("[" + ",".join(lists[key]) + "]" if key in lists else canonical_json(view[key]))
        for key in sorted(view)
        if key != "signature"
    ]
    return ("{" + ",".join(parts) + "}").encode("utf-8")


def sign_view(view: Mapping[str, Any], signer: Signer) -> dict[str, Any]:
    """Return ``view`` with its signature block."""
    return _signed(view, signer, _unsigned(view))


def _signed(view: Mapping[str, Any], signer: Signer, payload: bytes) -> dict[str, Any]:
    return {**view, "signature": {"alg": signer.alg, "value": signer.sign(payload)}}


@dataclass(frozen=True, slots=True)
class VerifiedView:
    """A Return View whose signature, digests, binding and expiry were checked.

    The digests of a view `issue` signs are made from the entries the signed bytes hold.
    """

    view: Mapping[str, Any]
    item_ids: tuple[str, ...]
    _token: object

    def __post_init__(self) -> None:
        if self._token is not _VERIFIED:
            raise TypeError("VerifiedView is made only by readmit.admission.view.verify_view")


_VERIFIED = object()


def verify_view(
    signed: Mapping[str, Any],
    signer: Signer,
    at: datetime,
    expect: Mapping[str, Any] | None = None,
) -> VerifiedView:
    """Check a signed view's format, signature, item digests, expiry and (optionally) binding.

    ``expect``: fields the view must hold with these values (``agent``, ``cycle``, …).

    Raises:
        ViewRejected: naming the first check that failed.
        InvalidInput: if ``at`` has no time zone, or ``expect`` names no field of a view.
    """
    if naive(at):
        raise InvalidInput("verify_view: at has no time zone (give an aware one, e.g. now(UTC))")
    unknown = sorted(set(expect or {}) - VIEW_FIELDS)
    if unknown:
        raise InvalidInput(f"verify_view: expect names {unknown}, no field of a view")
    return _checked(signed, signer, at, expect or {}, None)


VIEW_FIELDS = frozenset(
    {"format", "cycle", "workspace", "agent", "principal", "role", "task", "purpose", "epoch"}
    | {"departure_epoch", "policy", "issued_at", "expires_at", "items", "coverage", "excluded"}
)
"""The fields of a signed view (but its signature): what ``expect`` may name."""


def _checked(
    signed: Mapping[str, Any],
    signer: Signer,
    at: datetime,
    expect: Mapping[str, Any],
    payload: bytes | None,
) -> VerifiedView:
    """`verify_view`; ``payload``, when given, is the unsigned view as `issue` just signed it.

    The items' digests of such a view were made from the entries its payload holds, so they
    are not made again; a view from anywhere else has every entry digested afresh.
    """
    try:
        if signed.get("format") != VIEW_FORMAT:
            raise ViewRejected(f"format is not {VIEW_FORMAT}")
        _check_signature(signed, signer, payload)
        if payload is None:
            _check_digests(signed["items"])
        if not parse_time(signed["issued_at"]) <= at < parse_time(signed["expires_at"]):
            held = f"it holds from {signed['issued_at']} until {signed['expires_at']}"
            raise ViewRejected(f"not valid at {format_time(at)} ({held})")
        for name, value in expect.items():
            if signed[name] != value:
                raise ViewRejected(f"{name} is {signed[name]!r}, expected {value!r}")
        return VerifiedView(signed, tuple(e["id"] for e in signed["items"]), _VERIFIED)
    except KeyError as exc:
        raise ViewRejected(f"malformed view: it has no {exc.args[0]!r}") from exc
    except (TypeError, ValueError, AttributeError) as exc:
        raise ViewRejected(f"malformed view: {exc}") from exc


def _check_signature(signed: Mapping[str, Any], signer: Signer, payload: bytes | None) -> None:
    """The view's signature block, checked over ``payload`` (else the unsigned view)."""
    signature = signed["signature"]
    if not isinstance(signature, Mapping) or set(signature) != {"alg", "value"}:
        raise ViewRejected("the signature block must hold exactly alg and value")
    if signature["alg"] != signer.alg:
        raise ViewRejected(
            f"signature does not match: the view is signed with {signature['alg']!r}, "
            f"checked with a {signer.alg!r} key"
        )
    signed_bytes = _unsigned(signed) if payload is None else payload
    if signer.verify(signed_bytes, signature["value"]):
        return
    rewritten = _as_issued(signed) if payload is None else None
    if rewritten is None or not signer.verify(_unsigned(rewritten), signature["value"]):
        raise ViewRejected("signature does not match")


_FRACTIONS = ("obligations", "critical")
"""The view's coverage, fractions `issue` writes as floats (``1.0``), as its exclusions'
``confidence``."""


def _as_issued(view: Mapping[str, Any]) -> dict[str, Any] | None:
    """``view`` with its fractions as floats, where a JSON tool rewrote one (``1.0`` as ``1``).

    jq 1.6 does, and the signature covers the canonical JSON, where ``1`` and ``1.0``
    differ: a view passed through it was refused as tampered with. The same numbers
    written the other way are the same view. None when no fraction was rewritten.
    """
    coverage, excluded = view.get("coverage"), view.get("excluded")
    if not isinstance(coverage, Mapping) or not isinstance(excluded, list):
        return None
    rewritten = [0]

    def fraction(value: object) -> object:
        if type(value) is int and value in (0, 1):  # a fraction: 0 and 1 are its only ints
            rewritten[0] += 1
            return float(value)
        return value

    fixed = {k: fraction(v) if k in _FRACTIONS else v for k, v in coverage.items()}
    ruled = [
        {k: fraction(v) if k == "confidence" else v for k, v in e.items()}
        if isinstance(e, Mapping)
        else e
        for e in excluded
    ]
    return {**view, "coverage": fixed, "excluded": ruled} if rewritten[0] else None


def _check_digests(entries: Sequence[Mapping[str, Any]]) -> None:
    for entry in entries:
        body = {k: v for k, v in entry.items() if k != "digest"}
        if entry_digest(body) != entry["digest"]:
            raise ViewRejected(f"digest of item {entry['id']!r} does not match its content")


def issue(
    ctx: ReturnContext,
    selection: Selection,
    exclusions: Sequence[Exclusion],
    policy: Policy,
    signer: Signer,
) -> VerifiedView:
    """Build the Return View of ``selection``, sign it and `expose` it, serializing it once.

    ``exclusions`` are the decided ones (the view never lists ``not_selected`` items).
    The signature is checked over the very bytes that were signed, and the items'
    digests were made from the items' entries as those bytes hold them: serializing the
    view again, or digesting its entries again, would give the same bytes and digests.

    Raises:
        ViewRejected: if the signature or any other check of `expose` fails.
    """
    view, lists = _draft(ctx, selection, exclusions, policy)
    payload = _joined(view, lists)
    return _expose(_signed(view, signer, payload), ctx, signer, policy, payload)


def expose(
    signed: Mapping[str, Any], ctx: ReturnContext, signer: Signer, policy: Policy
) -> VerifiedView:
    """Verify a freshly signed view against its own return before the agent sees it.

    Beyond `verify_view`: the binding must be this return's, every item must be
    the one in C and still pass every gate, and coverage and budgets must hold.

    Raises:
        ViewRejected: if any check fails.
    """
    return _expose(signed, ctx, signer, policy, None)


def _expose(
    signed: Mapping[str, Any],
    ctx: ReturnContext,
    signer: Signer,
    policy: Policy,
    payload: bytes | None,
) -> VerifiedView:
    who = ctx.returner
    binding = dict(
        zip(
            _BINDING,
            (
                ctx.cycle,
                ctx.workspace,
                who.agent,
                who.principal,
                who.role,
                who.task,
                who.purpose,
                ctx.epoch,
            ),
            strict=True,
        )
    )
    verified = _checked(signed, signer, who.at, binding, payload)
    items = [ctx.by_id.get(i) for i in verified.item_ids]
    present = [item for item in items if item is not None]
    if len(present) != len(items) or any(
        e["text"] != item.text for e, item in zip(signed["items"], present, strict=True)
    ):
        raise ViewRejected("an item is not the one recorded in this return's context")
    _, failed = apply_gates(present, ctx)
    if failed:
        raise ViewRejected(f"item {failed[0].item!r} fails the {failed[0].reason} check")
    if len(present) > policy.max_items or sum(len(i.text) for i in present) > policy.max_chars:
        raise ViewRejected("the view exceeds its budgets")
    coverage: Coverage = measure(present, ctx.role_obligations)
    if policy.complete_view_gate and not coverage.meets(policy):
        raise ViewRejected("the view does not cover the role's obligations")
    return verified
