"""The rater's side of the app: blind replay, Likert forms, pairwise preference, questionnaire,
rating plans, the rater window and the report view.

Blind mode shows only what a rater may see: speaker names and message text, read from a minimal
query. Nothing here may show thoughts, scores, decisions, memories, conditions, engines or models.
"""
