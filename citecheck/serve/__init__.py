"""serve: citecheck as a long-running service — the /verify and /check-answer API, the answer page, /review.

Owns: `api` (`serve`: validation, limits), `lanes` (slots, the parse lane, the deadline), `answer_app`
(/check-answer and the answer page at /), `serving` (uvicorn with a request-head
deadline), `audit_service` (the API's one audit writer), `review_app` (/review: auth, queue, pages).
Imports: anything below it (the flows, verdict, report, audit, web, cache, context, foundation); never
`evaluation`, the notebooks or the CLI.
"""
