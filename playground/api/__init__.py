"""The public Python API behind ``import playground as pg`` (docs/api.md): read databases, run.

Nothing here is imported by ``import playground``: ``playground/__init__.py`` loads each public
name from its module on first use. Nothing in the engine imports this package.
"""
