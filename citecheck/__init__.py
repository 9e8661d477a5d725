"""citecheck: check whether an LLM's citations hold up.

The pipeline, one package per stage (docs/DESIGN.md has the module map):
    source -> matching -> judge -> verdict (guard, gate) -> audit / report      a source document
    web (fetch, passages, retrieval) -> judge -> verdict -> audit / report       a cited URL
The flows on top (`extract`, `check`, `verify`, `batch`) compose the stages; `serve`, `evaluation`, the
notebook helpers and the CLI sit above them. Imports run one way, down the order DESIGN writes once
(tests/test_layout.py); the foundation (`vocabulary`, `config`, `paths`, `files`, `cancellation`, `cache`,
`context`) is below every stage. `assert_holds` (the pytest plugin's assertion) loads on first use.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    """`citecheck.assert_holds`, imported on first use so `import citecheck` stays light."""
    if name == "assert_holds":
        from .pytest_plugin import assert_holds
        return assert_holds
    raise AttributeError(f"module 'citecheck' has no attribute {name!r}")
