"""Screening in selection order: judge only what this return could admit, within a budget.

The selector asks `Screener.admits` about each item before it takes it, so verifier work
grows with the view (its budget, obligations and premises), not with the store or the
absence. Lazy, not at write time (which would judge every item against every event, with
an LLM's latency on every write): a bounded number of calls a return, the verdicts kept
(`readmit.admission.invalidation.standing`); it can run while the agent is away (`ahead`).

For one item the screener first screens its premises, depth first (`depth_first`; an item
whose premise falls is ``premise_invalidated``), then proposes the later observations in
force that the item has not yet been screened against (`Observations`: after the epoch it
was screened through, under the same `screening_key`, or its own epoch) and judges them a
batch at a time, strongest link first, stopping at the first confirmed invalidation. With
a `DependencyScan`, a model is then shown what the scanner left out, and the verifier
judges what it names (`readmit.admission.invalidation.dependency_scan`).

Fail closed: a call the budget (``Policy.judgment_calls`` calls, ``max_judgment_tokens``
tokens, ``max_judgment_seconds`` spent waiting on calls and, in a service, on the return's
turn, `Policy.walk_steps` along chains of stand-ins) cannot pay for is not made, and an item
left partly judged is withheld as ``unscreened``; one whose pairs got no answer or an
abstention is ``verifier_unavailable``, as is one whose embedding proposals failed and no
lexical proposal confirmed.
"""

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import ParamSpec, TypeVar

from readmit.admission.context import ReturnContext, events_by_id
from readmit.admission.invalidation import depth_first, propagation
from readmit.admission.invalidation.cache import screening_key
from readmit.admission.invalidation.dependency_scan import DependencyScan
from readmit.admission.invalidation.depth_first import Deciding
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import (
    SPENT,
    UNFOLLOWED,
    Later,
    Pair,
    Progress,
    Verdict,
    Verifier,
    confirms,
    ended,
    in_force,
    invalidated,
    judge_batch,
    judges_news,
    tokens_used,
    unanswered,
    unembedded,
    unscreened,
)
from readmit.admission.invalidation.indexes import indexed
from readmit.admission.invalidation.judgment import Judgment
from readmit.admission.invalidation.narrowed import Steps, Unfollowed
from readmit.admission.invalidation.observations import (
    distinct,
    observations,
    observations_of,
    readable,
)
from readmit.admission.invalidation.restored import Restorations, rests_on
from readmit.admission.invalidation.scanner import STRUCTURE, Limits, Observations
from readmit.admission.invalidation.touched import Touching, screened_from
from readmit.admission.invalidation.unquoted import kept, unquoted
from readmit.clock import elapsed
from readmit.errors import VerifierUnavailable
from readmit.events import Recorded
from readmit.model import Item
from readmit.policy import Policy
from readmit.reasons import Exclusion, Reason, Stage

P = ParamSpec("P")
T = TypeVar("T")


class Screener:
    """Screens items on demand for one return (see the module docstring)."""

    def __init__(
        self,
        ctx: ReturnContext,
        pool: Sequence[Item],
        verifier: Verifier,
        policy: Policy,
        embedder: Embedder | None = None,
        on_progress: Progress | None = None,
        dependency_scan: DependencyScan | None = None,
        waited: float = 0.0,
    ) -> None:
        self.ctx, self.pool, self.verifier, self.policy = ctx, pool, verifier, policy
        self._pooled: dict[str, Item] | None = None
        self.news = judges_news(verifier)
        self.embedder, self.on_progress = embedder, on_progress
        self.limits = Limits(top_k=policy.scan_top_k, per_item=policy.scan_per_item)
        self.key = screening_key(verifier, policy, embedder, dependency_scan)
        self.through = ctx.screened.get(self.key, {})
        self.decided: dict[str, bool] = {}
        self.excluded: dict[str, Exclusion] = {}
        self.confirmed: list[Exclusion] = []
        self.confirming: dict[str, Later] = {}  # what confirmed each exclusion
        self.screened: dict[str, int] = {}
        self._starts: dict[str, int] = {}  # where each item's screening started
        self.calls = self.pairs = self.past_budget = 0
        self.seconds = waited  # the time budget bounds the whole wait, a turn's included
        self.tokens_before = tokens_used(verifier) + tokens_used(dependency_scan)
        self._index: Observations | None = None
        self._index_from = ctx.departure.epoch
        self._before: tuple[Mapping[str, Item], Mapping[str, Recorded]] = ({}, {})  # `readable`
        self._embed_failure: VerifierUnavailable | None = None
        self._unavailable: Exclusion | None = None
        self.scan, self.scans = dependency_scan, 0
        # A function, not a method: a cycle through the screener (which holds the
        # `Touching` that holds it) kept a return's data for the collector.
        departed = None if ctx.history is not None else ctx.departure.epoch
        self._start = partial(screened_from, departed, self.through)
        self._touching = Touching(pool, self._start)
        self._restorations: Restorations | None = None
        self._steps = Steps(policy.walk_steps)

    def admits(self, item: Item) -> bool:
        """Whether ``item`` survived screening; if not, its exclusion is in `excluded`."""
        return depth_first.decide(item, lambda i: self.decided.get(i.id), self._deciding)

    def judgment(self, standing: int, unscreened: int | None = None) -> Judgment:
        """The report of everything this screener did (``unscreened``: as the return lists)."""
        if unscreened is None:
            unscreened = sum(e.reason is Reason.UNSCREENED for e in self.excluded.values())
        return Judgment(
            verifier=self.verifier.name,
            calls=self.calls,
            pairs=self.pairs,
            tokens=self._spent(),
            scans=self.scans,
            unscreened=unscreened,
            max_calls=self.policy.judgment_calls,
            max_tokens=self.policy.max_judgment_tokens,
            seconds=self.seconds,
            max_seconds=self.policy.max_judgment_seconds,
            steps=self.policy.walk_steps - self._steps.left,
            max_steps=self.policy.walk_steps,
            standing=standing,
            confirmed=tuple(self.confirmed),
            premises={i: p for i, x in self.confirming.items() if (p := rests_on(x)) is not None},
            ends={i: end for i, x in self.confirming.items() if (end := ended(x)) is not None},
            screened=kept(self.screened, self._starts, unquoted(self.ctx) if self.screened else []),
            screened_as=self.key,
            at=self.ctx.returner.at,
        )

    def _deciding(self, item: Item) -> Deciding[Item]:
        """Decide ``item``: yields each premise holder to decide first, sent whether it held.

        A structure item (an obligation's, a frontier) is not judged, but falls with its
        premises, as propagation takes it down.
        """
        self.decided[item.id] = True  # a premise cycle cannot recurse forever
        held, structure = (yield from self._premises_hold(item)), item.kind in STRUCTURE
        self.decided[item.id] = held and (structure or self._judge(item))
        self._steps.end()  # judged: what is left of the steps is the return's again
        if not self.decided[item.id] and not structure and self._exhausted():
            self.past_budget += 1  # withheld once the budget was spent (what bounds the walk)
        return self.decided[item.id]

    def _premises_hold(self, item: Item) -> Deciding[Item]:
        if not item.depends_on:
            return True
        if self._pooled is None:
            self._pooled = {m.id: m for m in self.pool}
        for premise in sorted(item.depends_on):
            held = propagation.held_as(premise, self.ctx, self._pooled)
            if propagation.fell_outside(premise, self.ctx):
                fallen = Reason.PREMISE_INVALIDATED  # what rests on it fell before screening
            elif held is None or (yield held):
                continue
            else:
                fallen = self.excluded[held.id].reason
            self.excluded[item.id] = propagation.premise_fell(item.id, premise, fallen)
            return False
        return True

    def _judge(self, item: Item) -> bool:
        start = self._start(item)
        self._steps.begin()
        index = self._index
        if index is not None and not index.laters and start >= self._index_from:
            # Nothing in the window can be proposed (a verifier shown no news, a Δ
            # that withdrew nothing): screened, as judging nothing would find.
            self.screened[item.id], self._starts[item.id] = self.ctx.epoch, start
            return True
        if start >= self.ctx.epoch:
            # Screened through everything C holds (a return with nothing new since the
            # last): no observation can follow, so the index of Δ is not even built.
            laters: list[Later] = []
        elif not self._exhausted():
            laters = self._proposals(item, start)
        elif self._touches(item):
            # The budget is spent: do not even rank what it cannot judge.
            return self._unscreened(item, ())
        else:
            laters = []
        try:
            outcome = self._verify(item, laters)
            if outcome is None and self.scan is not None and self._index is not None:
                outcome = self._scan(item, start, laters, self.scan, self._index)
        except Unfollowed as spent:  # the walks ran out of steps (`Restorations.kept`)
            return self._unscreened(item, spent.shown)
        if outcome is False:
            return False
        unavailable = self._unavailable or self._unembedded(item, start)
        if unavailable is not None:
            self.excluded[item.id] = unavailable
            return False
        self.screened[item.id], self._starts[item.id] = self.ctx.epoch, start
        return True

    def _verify(self, item: Item, laters: Sequence[Later]) -> bool | None:
        """Judge ``laters`` against ``item``: False when it is excluded, else None.

        Remembers in `_unavailable` the first pair that got no answer (or an abstention).
        """
        self._unavailable = None
        laters = self._shown(item, laters)
        size = self.policy.batch_size
        for offset in range(0, len(laters), size):
            if self._exhausted():
                return self._unscreened(item, laters[offset:])
            premises = propagation.premise_texts(item, self.ctx)
            answers = self._call(
                [Pair(later=x, earlier=item, premises=premises) for x in laters[offset:][:size]]
            )
            if self._confirmed(item, answers):
                return False
            failed = [(p, v) for p, v in answers if v is None or v.abstained]
            if failed and self._unavailable is None:  # one the agent may read, if any
                sees = self._sees(item)
                pair, verdict = min(failed, key=lambda pv: not sees(pv[0].later))
                self._unavailable = unanswered(pair, verdict, self.verifier.name, sees(pair.later))
        return None

    def _scan(
        self,
        item: Item,
        start: int,
        proposed: Sequence[Later],
        scan: DependencyScan,
        index: Observations,
    ) -> bool | None:
        """Show the model what the scanner did not propose; judge what it names."""
        unavailable = self._unavailable
        left = self._lexical(lambda: index.unproposed(item, start, proposed, scan.window))
        left = self._shown(item, left)  # as the verifier would be shown them
        named: list[Later] = []
        for offset in range(0, len(left), scan.batch):
            if self._exhausted():
                return self._unscreened(item, left[offset:])
            shown = left[offset:][: scan.batch]
            self.calls += 1
            self.scans += 1
            try:  # any failure, or flags not one an event, is no answer: nothing let through
                premises = propagation.premise_texts(item, self.ctx)
                flags = list(self._timed(scan.scan, item.text, premises, shown))
                if len(flags) != len(shown):
                    raise VerifierUnavailable(f"{len(flags)} flags for {len(shown)} events")
            except Exception as exc:
                unavailable = unavailable or Exclusion(
                    item=item.id,
                    reason=Reason.VERIFIER_UNAVAILABLE,
                    stage=Stage.IMPLICIT,
                    evidence=tuple(x.event_id for x in shown),
                    detail=f"the dependency scan failed: {exc}",
                )
                continue
            named += [x for x, flag in zip(shown, flags, strict=True) if flag]
        outcome = self._verify(item, named)
        self._unavailable = self._unavailable or unavailable
        return outcome

    def _shown(self, item: Item, laters: Sequence[Later]) -> list[Later]:
        """``laters`` as a verifier or the scan is shown them with ``item`` (`kept`)."""
        if not laters:
            return []
        before = any(x.epoch <= self.ctx.departure.epoch for x in laters)  # the log before it too
        return distinct(self._restored(before).kept(item, laters, self.news))

    def _restored(self, before: bool) -> Restorations:
        """What the window's events restore (`restored`): made once a pair is judged.

        ``before``: for observations from before the departure, so every event of the log
        since the earliest is read (the index's history may hold only withdrawals).
        """
        if self._restorations is None:
            ctx = self.ctx
            self._restorations = Restorations.of(ctx.delta, ctx.agents, ctx.restoration, ctx.by_id)
            self._restorations.steps = self._steps
        if before and self.ctx.history is not None:
            self._restorations.add_from(self._index_from, self.ctx.history)
        return self._restorations

    def _call(self, batch: list[Pair]) -> list[tuple[Pair, Verdict | None]]:
        self.calls += 1
        self.pairs += len(batch)
        answers = self._timed(judge_batch, self.verifier, batch)
        if self.on_progress is not None:
            self.on_progress(self.calls, self.policy.judgment_calls)
        return answers

    def _confirmed(self, item: Item, answers: list[tuple[Pair, Verdict | None]]) -> bool:
        """Record the earliest event that invalidates ``item``, if any answer confirms one."""
        found = [(p, v) for p, v in answers if v is not None and confirms(v, self.policy.threshold)]
        if not found:
            return False
        sees = self._sees(item)  # of the earliest event's observations, one the agent may read
        pair, verdict = min(found, key=lambda pv: (pv[0].later.epoch, not sees(pv[0].later)))
        self.excluded[item.id] = invalidated(pair, verdict, self.verifier.name, sees(pair.later))
        self.confirmed.append(self.excluded[item.id])
        self.confirming[item.id] = pair.later
        return True

    def _unembedded(self, item: Item, start: int) -> Exclusion | None:
        """``verifier_unavailable`` when the embedder failed and later events could matter."""
        news = self._index.first_after(start, item) if self._index is not None else None
        failure = self._embed_failure
        return None if failure is None or news is None else unembedded(item.id, news, failure)

    def _unscreened(self, item: Item, left: Sequence[Later]) -> bool:
        why = self._exhausted() or SPENT  # which of the budget's parts
        self.excluded[item.id] = unscreened(item.id, left, why, self._sees(item))
        return False

    def _sees(self, item: Item) -> Callable[[Later], bool]:
        """Whether the returning agent may read what a verifier reads with ``item``."""
        return lambda later: readable(later, self.ctx, item, *self._before)

    def _timed(self, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``call(*args, **kwargs)``, its time added to what this return spent waiting on calls."""
        started = elapsed()
        try:
            return call(*args, **kwargs)
        finally:
            self.seconds += elapsed() - started

    def _exhausted(self) -> str | None:
        """Why the budget is spent (`SPENT`, or `UNFOLLOWED` for its steps), or ``None``."""
        seconds, tokens = self.policy.max_judgment_seconds, self.policy.max_judgment_tokens
        if self.calls >= self.policy.judgment_calls or (seconds and self.seconds >= seconds):
            return SPENT  # a time and a token budget are positive (`Policy`)
        if tokens and self._spent() >= tokens:
            return SPENT
        return UNFOLLOWED if self._steps.spent else None  # an item begun is judged (`Steps`)

    def _spent(self) -> int:
        return tokens_used(self.verifier) + tokens_used(self.scan) - self.tokens_before

    def _lexical(self, call: Callable[[], T]) -> T:
        """``call()``, again with lexical proposals alone if the embedder failed (fail closed).

        For this return; what they do not confirm is withheld (`_unembedded`).
        """
        try:
            return call()
        except VerifierUnavailable as exc:
            self._embed_failure = exc
            if self._index is not None:
                self._index.embedder = None
            return call()

    def _touches(self, item: Item) -> bool:
        return self._lexical(lambda: self._touching(item, self._observations))

    def _proposals(self, item: Item, start: int) -> list[Later]:
        index = self._observations(start)
        return self._lexical(lambda: index.proposals(item, start, self.limits))

    def _observations(self, start: int) -> Observations:
        """The index over Δ, and back through the history as far as any candidate needs.

        Built at most twice a return: over Δ, and once over the widest window the
        pool's items need when the first of them reaches back before the departure.
        """
        # Without a history the index cannot reach back further: the one built serves all.
        if self._index is not None and (start >= self._index_from or self.ctx.history is None):
            return self._index
        laters = observations(self.ctx, self.news)
        if start < self.ctx.departure.epoch and self.ctx.history is not None:
            starts = (self._start(i) for i in self.pool if i.kind not in STRUCTURE)
            self._index_from = min(start, min(starts, default=start))
            earlier = self.ctx.history(self._index_from, self.news)
            self._before = {i.id: i for i in earlier.items}, events_by_id(earlier.events)
            by_id = {i.id: i for i in (*earlier.items, *self.ctx.items, *self.ctx.left_out)}
            before = observations_of(
                earlier.events, by_id.values(), by_id, self.news, self.ctx.agents, earlier.gone
            )
            laters = before + laters
        laters = in_force(laters, self.ctx.returner.at)
        embedder = None if self._embed_failure is not None else self.embedder
        self._index = indexed(laters, embedder, self.pool, self.policy.scan_embed_top_k)
        return self._index
