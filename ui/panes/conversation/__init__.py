"""The conversation pane: the transcript's rows and how they are placed."""
