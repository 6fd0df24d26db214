"""The automatic judge: a model rates sessions blind on the human form's 7 metrics and picks the
more natural conversation of a rating plan's pairs, stored as rater ``judge:<model>``.

Modules: :mod:`~playground.judging.blind` (the blind transcript), :mod:`~playground.judging.prompts`
(our wording and the answer schemas), :mod:`~playground.judging.scores` (an answer's rating
distribution and score), :mod:`~playground.judging.judge` (``judge_session``, ``judge_pairs``) and :mod:`~playground.cli.judge` (``playground judge``). Nothing is imported
here, so that building the command line stays cheap.
"""
