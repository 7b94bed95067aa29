"""One return's decision as `ReadmitSession` filters a history by: by fact text.

A session holds texts, not items: a history item is left out when its fact's text is one
the decision (or a withdrawal since) kept out and no fact the agent holds has it, and the
developer message put in front of the history says what was admitted and what left out.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace

from readmit.admission.decision import Issued
from readmit.clock import format_time
from readmit.decide import Decided
from readmit.integrations.following import Following
from readmit.integrations.team import FOREVER, expiry, readable, removals

PREAMBLE = "readmit return view"
"""How the developer message in front of the history begins."""


@dataclass(frozen=True, slots=True)
class Judged:
    """One decision by fact text: what it admitted and why it kept out the rest."""

    decided: Decided
    admitted: frozenset[str]
    removed: Mapping[str, str]
    """Text -> why the decision kept the fact out."""
    deadline: float = FOREVER.timestamp()
    """When the issued view expires, as a POSIX timestamp (never, if none was issued)."""
    renews: Decided | None = None
    """The decision whose view expired, if this one was decided because it did."""
    note: str = ""
    """The developer message (built once per decision)."""
    told: frozenset[str] = frozenset()
    """The texts of ``removed`` the agent may read: the ones the developer message lists."""
    followed: int = 0
    """How many withdrawals after the return (`Following.gone`) are taken out already."""
    own: frozenset[str] = frozenset()
    """The texts of the agent's own facts stated since the return that stand: shown over a
    removal of the same text (its fresh state; a probe found a restated fact hidden)."""
    owned: int = 0
    """How many of the agent's own statements since the return `own` was made from."""
    back: int = 0
    """How many items withheld until their start had started when it was made (`Following.back`)."""

    def without(self, following: Following) -> "Judged":
        """This judgment less the facts teammates withdrew since the return.

        Only facts the agent holds as its own: admitted by the view, or stated by it
        since. A text leaves the history once no such fact with it stands (another
        agent's withdrawn copy takes nothing away); the developer message lists it.
        """
        admitted = self.decided.decision.items if isinstance(self.decided.decision, Issued) else ()
        live: dict[str, set[str]] = {}
        for item_id, text in (
            *((i.id, i.text) for i in admitted),
            *((i, following.texts[i]) for i in following.own),
        ):
            live.setdefault(text, set()).add(item_id)
        gone: dict[str, str] = {}
        for removal in following.gone:
            said = following.text_of(removal.item) or ""
            held = live.get(said)
            if held and removal.item in held:
                held.discard(removal.item)
                if not held:
                    gone[said] = reason_text(removal.reason, removal.detail)
        own = frozenset(text for text, held in live.items() if held & following.own)
        counted = replace(self, followed=len(following.gone), own=own, owned=len(following.own))
        if own == self.own and all(t in self.removed and t not in self.admitted for t in gone):
            return counted  # the note stands as it is
        judged = replace(
            counted,
            admitted=self.admitted - gone.keys(),
            removed={**self.removed, **gone},
            told=self.told | gone.keys(),
        )
        return replace(judged, note=preamble(judged))

    def keeps(self, text: str | None) -> bool:
        """Whether a history item whose fact has ``text`` (None: no fact) is shown."""
        if text is None or text not in self.removed:
            return True
        return text in self.admitted or text in self.own


def judge(
    decided: Decided,
    renews: Decided | None = None,
    before: Mapping[str, tuple[str, bool]] | None = None,
) -> Judged:
    """``decided`` by fact text.

    ``before``: the texts withdrawn before it, which it did not judge (why, and whether the
    message lists it).
    """
    decision = decided.decision
    items = decision.items if isinstance(decision, Issued) else ()
    by_id = decided.context.by_id
    left = {i.id: i for i in decided.context.left_out}  # not in C: `get_items` raised KeyError
    gone = removals(decided).values()
    removed = {
        (by_id.get(r.item) or left[r.item]).text: reason_text(r.reason, r.detail)
        if r.reason != "withheld"
        else f"withheld: no view was issued ({decision.outcome})"
        for r in gone
    }
    # Told only of what it may read: another principal's text is filtered out, never shown;
    # what the departure left out stood in the agent's sight when it left.
    told = {left[r.item].text for r in gone if r.item in left}
    told |= {by_id[r.item].text for r in gone if readable(decided, r.item)}
    said = removed.keys() | {i.text for i in items}  # once, not once a text
    earlier = {t: w for t, w in (before or {}).items() if t not in said}
    removed |= {text: why for text, (why, _) in earlier.items()}
    told |= {text for text, (_, listed) in earlier.items() if listed}
    deadline = expiry(decided).timestamp()
    judged = Judged(
        decided, frozenset(i.text for i in items), removed, deadline, renews, told=frozenset(told)
    )
    return replace(judged, note=preamble(judged))


def reason_text(reason: str, detail: str) -> str:
    """A removal as the developer message words it: its code, then its detail."""
    return detail if detail.startswith(reason) else f"{reason}: {detail}" if detail else reason


def preamble(judged: Judged) -> str:
    """The developer message put in front of the history after a return."""
    decided = judged.decided
    decision = decided.decision
    lines = [f"{PREAMBLE} (decision {decided.number}, {decision.outcome})."]
    if judged.renews is not None:
        expired = format_time(expiry(judged.renews))
        lines.append(
            f"The view of decision {judged.renews.number} expired at {expired}: "
            "this return was decided afresh."
        )
    if isinstance(decision, Issued):
        lines.append("Rely only on these shared facts from before your return:")
        kept = [f"- {i.text}" for i in decision.items if i.text in judged.admitted]
        lines += kept or ["- (none)"]
    else:
        lines.append("No view was issued: rely on no shared fact from before your return.")
    left = [
        f"- {text} ({why})"
        for text, why in judged.removed.items()
        if text in judged.told and text not in judged.own and text not in judged.admitted
    ]
    if left:
        lines += ["Left out of your history, and why:", *left]
    if isinstance(decision, Issued):
        lines.append("Signed view: " + json.dumps(decision.signed, sort_keys=True, default=str))
    return "\n".join(lines)
