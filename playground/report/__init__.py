"""The ratings report: statistics, its typed model, text and plots, the agreement of the judge and geometry with people, and the analysis of user studies (study plans)."""
