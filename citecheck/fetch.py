"""fetch: load a cited page and say whether the page itself settles the citation.

Rules (filled in below):
- Crawlbase when CRAWLBASE_TOKEN is set, else a direct httpx fetch; both return a FetchResult.
- 404/410 -> unreachable; a deep link landing on `/` -> not_found (redirected_to_homepage);
  a short "page not found" template -> unreachable (soft_404); a .pdf URL -> not_found without a crawl.
- Every fetch goes through the cache, so notebooks replay offline; no token is ever cached.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class FetchResult:
    url: str                      # as cited
    final_url: str | None         # after redirects
    original_status: int | None   # the origin's HTTP status
    markdown: str                 # readable text ('' when none)
    rid: str | None               # Crawlbase storage rid (never the storage URL)
    label: str | None             # 'unreachable' / 'not_found' only when the page settles it
    reason: str | None            # http_404 / http_410 / soft_404 / redirected_to_homepage / ...
    backend: str                  # 'crawlbase' or 'direct'

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "FetchResult":
        return cls(**data)


def fetch(url: str) -> FetchResult:
    """Crawlbase when CRAWLBASE_TOKEN is set, else direct; cached via default_cache()."""
    raise NotImplementedError("fetch is being built (issue 4)")
