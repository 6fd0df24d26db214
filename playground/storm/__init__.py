"""STORM-style simulated users (docs/spec.md §2, after the STORM paper).

A simulated user has a private profile and, every turn, a hidden state that no other participant
ever sees. The records shared by the generator, the participant, the dyadic runs, the metrics and
the window are in :mod:`playground.domain.simulated_user`.
"""
