"""longbench100: length-controllable long-context benchmark generation and LongScore evaluation."""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """Load the library API (``from longbench100 import run_predict``) on first use, keeping ``import`` cheap."""
    import importlib

    try:
        return getattr(importlib.import_module(".api", __name__), name)
    except AttributeError:
        raise AttributeError(f"module 'longbench100' has no attribute {name!r}") from None
