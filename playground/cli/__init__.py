"""The command line: ``playground`` and its subcommands (main.py builds the parser)."""
