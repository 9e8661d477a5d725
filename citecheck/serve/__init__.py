"""serve: citecheck as a long-running service — the /verify API and the /review pages.

Owns: `api` (`serve`: validation, limits, the worker pool), `serving` (uvicorn with a request-head
deadline), `audit_service` (the API's one audit writer), `review_app` (/review: auth, queue, pages).
Imports: anything below it (the flows, verdict, report, audit, web, cache, context, foundation); never
`evaluation`, the notebooks or the CLI.
"""
