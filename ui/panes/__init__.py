"""The window's panes, one package each, as the window shows them."""
