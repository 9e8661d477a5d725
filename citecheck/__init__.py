"""citecheck: check whether an LLM's citations hold up."""

__version__ = "0.1.0"
