"""The ratings report: statistics, its typed model, text and plots, and the agreement of the judge and geometry with people."""
