"""The thought reservoir: an agent's thoughts, kept until expressed or deleted (retention)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from playground import domain, errors, events
from playground.inner_thoughts.memory import Pool


class ThoughtReservoir:
    """Holds an agent's thoughts and their vectors.

    Unexpressed thoughts stay retrievable: when one becomes salient again it is re-scored
    (retention) and offered as a stimulus for new thoughts (evolution).
    """

    def __init__(self, agent: str, emit: Callable[[events.BaseEvent], None]) -> None:
        self.agent = agent
        self._emit = emit
        self.thoughts: dict[int, domain.Thought] = {}
        self._vec: dict[int, np.ndarray] = {}
        #: Deleted thoughts and their vectors, kept for an undo.
        self._deleted: dict[int, tuple[domain.Thought, np.ndarray]] = {}

    def __contains__(self, thought_id: int) -> bool:
        return thought_id in self.thoughts

    def get(self, thought_id: int) -> domain.Thought:
        try:
            return self.thoughts[thought_id]
        except KeyError:
            raise KeyError(f"{self.agent} has no thought {thought_id}") from None

    def add(self, thought: domain.Thought, vector: np.ndarray) -> None:
        self.thoughts[thought.id] = thought
        self._vec[thought.id] = vector
        self._emit(events.ThoughtFormed(thought=thought))

    def update(self, thought: domain.Thought) -> None:
        self.thoughts[thought.id] = thought

    def delete(self, thought_id: int) -> None:
        """Remove a thought; it is kept aside so :meth:`restore` can bring it back (undo).

        Raises:
            KeyError: the agent has no such thought.
        """
        thought = self.get(thought_id)
        self._deleted[thought_id] = (thought, self._vec.pop(thought_id))
        del self.thoughts[thought_id]
        self._emit(events.ThoughtDeleted(agent=self.agent, thought_id=thought_id))

    def restore(self, thought_id: int) -> domain.Thought:
        """Bring back a deleted thought as it was when deleted (its vector too).

        Raises:
            PlaygroundError: the thought was never deleted, or is already back.
        """
        try:
            thought, vector = self._deleted.pop(thought_id)
        except KeyError:
            raise errors.PlaygroundError(
                f"{self.agent} has no deleted thought {thought_id} to restore"
            ) from None
        self.thoughts[thought_id] = thought
        self._vec[thought_id] = vector
        for tid in sorted(self.thoughts):  # back in its place: pools list thoughts by id
            self.thoughts[tid] = self.thoughts.pop(tid)
        self._emit(events.ThoughtRestored(agent=self.agent, thought=thought))
        return thought

    def unexpressed(self) -> list[domain.Thought]:
        return [t for t in self.thoughts.values() if t.expressed_in is None]

    def pool(self, dim: int) -> Pool:
        """Unexpressed thoughts as a retrieval pool (weight 1); ``dim`` is the embedder's vector
        length (the shape of an empty pool)."""
        keep = self.unexpressed()
        if not keep:
            return Pool.empty(dim)
        return Pool(
            refs=[t.ref for t in keep],
            texts=[t.text for t in keep],
            vectors=np.stack([self._vec[t.id] for t in keep]),
            weights=np.ones(len(keep), np.float32),
            taus=np.array([t.last_access for t in keep], np.int64),
        )

    def touch(self, ids: list[int], t: int) -> None:
        for i in ids:
            if i in self.thoughts:
                self.thoughts[i] = self.thoughts[i].model_copy(update={"last_access": t})
