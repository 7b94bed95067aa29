"""Readers: how a returning agent answers probes from what it was given.

The offline reader needs no model: it answers a probe with the value of the
most recent admitted item (or private memory) that carries one for the probe's
key, else what the most recent admitted rule implies, else a seeded guess among
the options, the "no memory" baseline. It is a deterministic stand-in for an
actor, used for the generated suites; benchmarks whose answers need language
understanding use an LLM reader (`readmit.bench.llm`) or report the metric as
not computed.
"""

import random
from collections.abc import Mapping, Sequence

from readmit.bench.episode import Episode, Probe


def read(episode: Episode, admitted: Sequence[str], epochs: Mapping[str, int]) -> list[str | None]:
    """One answer per probe of ``episode`` from the admitted item and memory ids."""
    return [_answer(episode, probe, admitted, epochs) for probe in episode.probes]


def _latest(ids: Sequence[str], epochs: Mapping[str, int]) -> str | None:
    return max(ids, key=lambda i: (epochs.get(i, 0), i), default=None)


def _answer(
    episode: Episode, probe: Probe, admitted: Sequence[str], epochs: Mapping[str, int]
) -> str | None:
    key = probe.key or probe.id
    direct = [i for i in admitted if episode.values.get(i, ("", ""))[0] == key]
    if (best := _latest(direct, epochs)) is not None:
        return episode.values[best][1]
    rules = [i for i in admitted if key in episode.derive.get(i, {})]
    if (rule := _latest(rules, epochs)) is not None:
        return episode.derive[rule][key]
    if not probe.options:
        return None
    return random.Random(f"{episode.id}/{probe.id}").choice(probe.options)
