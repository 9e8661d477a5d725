"""`python -m citecheck cache export|stats`: write the export from the store, or say what both hold.

Rules:
- `export` merges the store into json_cache.json (`cache.export` rules) and prints what changed;
  `--check` writes nothing and exits 1 when the export is behind the store (a recording not exported).
- `stats` checks every entry of both files (a malformed one is reported by key and file) and prints, per
  function and model, how many calls each file holds and their date range; exit 0.
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..paths import shown
from . import Cache, models_used

if TYPE_CHECKING:                      # the context is built above the cache; only its type is named here
    from ..context import RunContext


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = sub.add_parser("export", help="merge the store into the export (json_cache.json)")
    export.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when the store holds entries the export lacks")
    sub.add_parser("stats", help="entries per function and model in the export and the store")


def _store_name(cache: Cache) -> str:
    return shown(cache.store.path) if cache.store is not None else "(none: CITECHECK_CACHE_STORE=off)"


def export(cache: Cache, check: bool) -> int:
    done = cache.export(dry_run=check)
    change = f"{done['added']} added, {done['changed']} changed from {_store_name(cache)}"
    if check:
        behind = done["added"] or done["changed"]
        print(f"{shown(cache.path)}: {'behind the store' if behind else 'up to date'} ({change})")
        return 1 if behind else 0
    print(f"{shown(cache.path)}: {done['entries']} entries ({change}; "
          f"{'written' if done['written'] else 'unchanged, not rewritten'})")
    return 0


def stats(cache: Cache) -> int:
    in_store, exported = cache.stored(), cache.exported()
    print(f"export {shown(cache.path)}: {len(exported)} entries")
    print(f"store  {_store_name(cache)}: {len(in_store)} entries, "
          f"{sum(1 for key in in_store if exported.get(key) != in_store[key])} not in the export")
    print(f"{'function':<24} {'model':<40} {'calls':>6}  recorded")
    for row in models_used(cache):
        print(f"{row['function']:<24} {row['model']:<40} {row['calls']:>6}  {row['first']}..{row['last']}")
    return 0


def run(args: argparse.Namespace, ctx: RunContext) -> int:
    if args.action == "export":
        return export(ctx.cache, args.check)
    return stats(ctx.cache)
