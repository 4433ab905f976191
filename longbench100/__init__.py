"""longbench100: length-controllable long-context benchmark generation and LongScore evaluation."""

__version__ = "0.1.0"
