"""The built-in verifier first, a model only where it is needed: ``chain:FIRST,SECOND``.

Spec: ``chain:builtin,openai-compat:MODEL@URL`` or ``chain:builtin,gguf:PATH`` (the first
spec ends at the first comma; the second is any verifier spec). The first verifier decides
the pairs whose later event withdrew or replaced state (what the built-in verifier covers,
without a model); the second judges every other pair (premise changes, which need world
knowledge) and the pairs the first abstained on. A withdrawal the first finds unlinked is
decided there: it is not sent on.

Fail closed, pair by pair: when the second verifier raises `VerifierUnavailable`, the pairs
sent to it come back as abstentions (withheld as ``verifier_unavailable``) while the first
verifier's verdicts stand; when the first raises, the whole call does.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from readmit.admission.invalidation.implicit import Pair, Verdict, Verifier, tokens_used
from readmit.errors import ConfigError, VerifierUnavailable
from readmit.urls import shown


@dataclass
class ChainVerifier:
    """`Verifier` that sends a pair to ``second`` only when ``first`` cannot decide it."""

    first: Verifier
    second: Verifier
    first_pairs: int = 0
    """Pairs the first verifier decided."""
    second_pairs: int = 0
    """Pairs sent to the second verifier (not withdrawals, or the first abstained)."""

    @property
    def name(self) -> str:
        return f"chain:{self.first.name},{self.second.name}"

    @property
    def calls(self) -> int:
        """Requests both parts made (the built-in verifier makes none)."""
        return int(getattr(self.first, "calls", 0)) + int(getattr(self.second, "calls", 0))

    @property
    def tokens_used(self) -> int:
        """Tokens both parts used."""
        return tokens_used(self.first) + tokens_used(self.second)

    def judge(self, pairs: Sequence[Pair]) -> Sequence[Verdict]:
        withdrawals = [i for i, p in enumerate(pairs) if p.later.withdrawn_text is not None]
        verdicts = self._ask(self.first, pairs, withdrawals) if withdrawals else {}
        rest = [i for i in range(len(pairs)) if i not in verdicts or verdicts[i].abstained]
        self.first_pairs += len(verdicts) - sum(v.abstained for v in verdicts.values())
        if rest:
            self.second_pairs += len(rest)
            try:
                verdicts |= self._ask(self.second, pairs, rest)
            except VerifierUnavailable as exc:
                verdicts |= {i: _unavailable(self.second.name, exc) for i in rest}
        return [verdicts[i] for i in range(len(pairs))]

    def _ask(
        self, verifier: Verifier, pairs: Sequence[Pair], which: list[int]
    ) -> dict[int, Verdict]:
        answered = list(verifier.judge([pairs[i] for i in which]))
        if len(answered) != len(which):
            raise VerifierUnavailable(
                f"{verifier.name} answered {len(answered)} of {len(which)} pairs"
            )
        return dict(zip(which, answered, strict=True))


def _unavailable(name: str, exc: VerifierUnavailable) -> Verdict:
    return Verdict(
        invalidates=False, confidence=0.0, abstained=True, reason=f"{name} is unavailable: {exc}"
    )


def factory(argument: str, settings: Mapping[str, str] | None = None) -> ChainVerifier:
    """Build from ``FIRST,SECOND`` (two verifier specs; the first has no comma).

    Raises:
        ConfigError: if either spec is missing or names no installed verifier.
    """
    from readmit.plugins import make_verifier

    first, sep, second = argument.partition(",")
    if not sep or not first or not second:
        raise ConfigError(
            f"chain:{shown(argument)}: write chain:FIRST,SECOND, e.g. chain:builtin,gguf:PATH"
        )
    return ChainVerifier(make_verifier(first, settings), make_verifier(second, settings))
