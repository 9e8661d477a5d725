"""docs/DESIGN.md stays a contract a contributor reads whole: at most 25,000 bytes. Details belong in the
other docs pages (configuration.md for every variable and bound, cli.md for every command)."""
from citecheck.paths import ROOT

LIMIT = 25_000


def test_design_is_at_most_25_kb():
    size = len((ROOT / "docs" / "DESIGN.md").read_bytes())
    assert size <= LIMIT, f"docs/DESIGN.md is {size:,} bytes, over {LIMIT:,}: move detail into docs/*.md"
