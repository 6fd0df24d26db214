"""The Experiments view: launch, watch, cancel and resume the paper's simulation study, and open
any of its conversations in replay (importing this package loads no Qt)."""
