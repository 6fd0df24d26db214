"""The thoughts pane: a participant's thought bubbles, page by page."""
