"""The package's version (``pyproject.toml`` ``project.version``), importable from any layer."""

__version__ = "0.1.0"
