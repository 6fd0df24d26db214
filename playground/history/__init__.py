"""The read side: a recording replayed step by step, the state at any step, the thought ledger, and forks."""
