"""One citation of a batch: checked, gated, and never the end of the batch.

Rules:
- An unexpected failure, or an answer without a known label, becomes not_found / check_failed (the
  detail goes to the log, the row carries the bare code).
- Failures every citation would repeat (`setting_errors`: an offline cache miss, a missing or rejected
  key) are raised: they stop the batch with one clear error instead of identical rows.
"""
from __future__ import annotations

import logging
from typing import Callable

from .. import config
from ..verdict.review import Gate, gated
from ..vocabulary import CHECK_FAILED, LABELS, NOT_FOUND, CitationRow

Verify = Callable[[str, str], dict]
log = logging.getLogger("citecheck.batch")


def setting_errors() -> tuple[type[BaseException], ...]:
    """Failures every citation would repeat (a cache miss offline, a missing or rejected key): they stop
    the batch with one clear error instead of filling it with identical rows; what was decided stays."""
    from ..cache import CacheError
    from ..web.fetch import CrawlbaseRejected
    return (CacheError, config.MissingSetting, CrawlbaseRejected)


def check_one(verify: Verify, claim: str, url: str, threshold: "float | Gate") -> dict:
    """One citation -> a CitationRow dict gated for the model that answered (`verify`'s `model`), plus that
    `model` and the `passages` the judge read when `verify` says.
    An unexpected failure, or an answer without a known label, becomes not_found / check_failed (the
    detail goes to the log, the row carries the bare code)."""
    try:
        result = dict(verify(claim, url))
        if result.get("label") not in LABELS:
            raise ValueError(f"label {result.get('label')!r} is not one of {', '.join(LABELS)}")
    except setting_errors():
        raise
    except Exception as exc:         # noqa: BLE001 - one citation's failure must not stop the batch
        log.warning("%s", config.redact(f"{url}: check failed: {type(exc).__name__}: {exc}"))
        result = {"label": NOT_FOUND, "reason": CHECK_FAILED}
    row = gated(CitationRow.from_dict({**result, "url": url}).to_dict(), threshold, result.get("model"))
    return {**row, "passages": result.get("passages"), "model": result.get("model")}
