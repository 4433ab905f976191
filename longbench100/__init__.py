"""longbench100: length-controllable long-context benchmark generation and LongScore evaluation."""

__version__ = "0.1.0"


def __getattr__(name: str):
    """Import the Python API (``longbench100.api``) on first use, so ``import longbench100`` stays light."""
    import importlib

    api = importlib.import_module("longbench100.api")
    if name in api.__all__:
        return getattr(api, name)
    raise AttributeError(f"module 'longbench100' has no attribute {name!r}")
