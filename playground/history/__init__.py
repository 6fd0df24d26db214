"""The read side: a recording replayed step by step, the state at any step, the ledgers the panes render, and forks."""
