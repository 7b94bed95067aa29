"""Benchmark: the scanner's cost with embedding proposals, as a ratio to lexical proposals alone.

For windows of N earlier items and N/10 later observations (seeded synthetic
texts), it times ``propose()`` with lexical proposals only (the baseline: BM25,
distinctive terms, depends_on), and with the embedder's nearest items added: on
a first return (every text embedded) and on later ones (vectors kept per text,
as in a running service). The ratios are to the lexical baseline.

The embedder is WordLlama's packaged model (``pip install '.[wordllama]'`` in the
readmit checkout).

Usage: python bench/scanner.py [--sizes 100,1000,5000] [--repeat 3]
"""

import argparse
import random
from dataclasses import replace

from readmit.admission.invalidation.embeddings import VectorCache
from readmit.admission.invalidation.implicit import Later
from readmit.admission.invalidation.scanner import propose
from readmit.bench.timing import best
from readmit.model import Item
from readmit.verifiers import wordllama_embedder
from readmit.verifiers.pairs import sourced_item
from readmit.verifiers.wordllama_embedder import WordLlamaEmbedder

VOCABULARY = """
hotel flight pickup invoice deploy cluster review budget ferry station trail coffee rent fund
alert key room agenda vendor release library section table tickets prescription reminder
account deposit subscription standup lobby desk crossing airport bonus
"""
WORDS = tuple(VOCABULARY.split())
NAMES = ("Sunrise", "Atlas", "Kona", "Northbank", "Orion", "Granite", "Delta", "Meadow")


def window(size: int, seed: int) -> tuple[list[Item], list[Later]]:
    rng = random.Random(seed)

    def text() -> str:
        words = [rng.choice(WORDS) for _ in range(7)]
        words.insert(rng.randrange(7), f"{rng.choice(NAMES)}-{rng.randrange(size)}")
        return " ".join(words).capitalize() + "."

    items = [sourced_item(f"i{n}", text()) for n in range(size)]
    laters = [
        Later(event_id=f"e{n}", epoch=10, op="evidence", text=text()) for n in range(size // 10)
    ]
    return items, laters


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    embedder = wordllama_embedder.load()
    print(f"embedder: {embedder.name}; best of {args.repeat}")
    for size in (int(s) for s in args.sizes.split(",")):
        measure(size, args.repeat, embedder)


def measure(size: int, repeat: int, embedder: WordLlamaEmbedder) -> None:
    items, laters = window(size, seed=size)
    lexical = best(lambda: propose(laters, items, top_k=8), repeat)

    def scan(using: WordLlamaEmbedder) -> None:
        propose(laters, items, top_k=8, embedder=using, embed_top_k=4)

    first = best(lambda: scan(replace(embedder, cache=VectorCache())), repeat)
    scan(embedder)
    later = best(lambda: scan(embedder), repeat)
    print(
        f"{size} items, {len(laters)} observations: lexical {lexical * 1e3:.1f} ms; "
        f"lexical + nearest, first return {first * 1e3:.1f} ms (ratio {first / lexical:.2f}), "
        f"later returns {later * 1e3:.1f} ms (ratio {later / lexical:.2f})"
    )


if __name__ == "__main__":
    main()
