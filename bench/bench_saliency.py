"""Benchmark: how salient the personas' memories are to the icebreakers, with MiniLM.

The paper's retrieval threshold (0.3) was set for the authors' embedding model. This measures, over
the 8 personas × 10 icebreakers, the saliency of every long-term memory to the icebreaker
(saliency = cos · weight · 0.95^(t − τ), with τ = 0 as at the start of a session) and prints, per
threshold, the share of triggers that retrieve at least one memory, at the first trigger (t = 1)
and later in a conversation (t = 8 and t = 15, for memories not retrieved since the start).

Run: .venv/bin/python bench/bench_saliency.py
"""

from __future__ import annotations

import numpy as np
from _common import REPO

from playground.cognition import scoring
from playground.embedding.minilm import MiniLMEmbedder
from playground.personas import load_icebreakers, load_personas
from playground.settings import RoomSettings

THRESHOLDS = (0.15, 0.2, 0.25, 0.3, 0.35)
STEPS = (1, 8, 15)


def main() -> None:
    personas = load_personas(REPO / "personas")
    icebreakers = load_icebreakers(REPO / "personas")
    embedder = MiniLMEmbedder()
    u = embedder.embed_sync(icebreakers)
    decay = RoomSettings().memory_decay
    default = RoomSettings().saliency_threshold
    print(
        f"{len(personas)} personas × {len(icebreakers)} icebreakers = "
        f"{len(personas) * len(icebreakers)} triggers per step; MiniLM; decay {decay}"
    )
    per_memory: list[float] = []
    best: dict[int, list[float]] = {t: [] for t in STEPS}
    for persona in personas:
        rows = [(f, 1.0) for f in persona.facts] + [(m.text, m.weight) for m in persona.memories]
        vectors = embedder.embed_sync([text for text, _ in rows])
        weights = np.array([w for _, w in rows], np.float32)
        taus = np.zeros(len(rows), np.int64)
        for i in range(len(icebreakers)):
            for t in STEPS:
                sal = scoring.saliency_matrix(vectors, weights, taus, u[i], None, t, decay)
                best[t].append(float(sal.max()))
                if t == 1:
                    per_memory.extend(float(x) for x in sal)
    pm = np.array(per_memory)
    print(
        "saliency of every memory at t = 1: "
        + " · ".join(f"p{q} {np.percentile(pm, q):.3f}" for q in (10, 25, 50, 75, 90, 99))
    )
    print(
        "most salient memory per trigger at t = 1: "
        + " · ".join(f"p{q} {np.percentile(best[1], q):.3f}" for q in (10, 25, 50, 75, 90))
    )
    print("\nshare of triggers retrieving ≥ 1 memory (saliency > threshold):")
    print("threshold " + "".join(f"{f't = {t}':>10}" for t in STEPS))
    for thr in THRESHOLDS:
        mark = "  ← default" if abs(thr - default) < 1e-9 else ""
        shares = "".join(f"{np.mean(np.array(best[t]) > thr):>10.0%}" for t in STEPS)
        print(f"{thr:>9.2f} {shares}{mark}")


if __name__ == "__main__":
    main()
