"""longbench100: length-controllable long-context benchmark generation and LongScore evaluation."""

from longbench100.core.version import __version__

__all__ = ["__version__"]


def __getattr__(name: str) -> object:
    """Expose the library API of :mod:`longbench100.api` at the top level, imported on first use."""
    import importlib

    api = importlib.import_module("longbench100.api")
    if name in api.__all__:
        return getattr(api, name)
    raise AttributeError(f"module 'longbench100' has no attribute {name!r}")
