"""The participants bar and the participant header of the side panes."""
