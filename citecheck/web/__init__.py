"""web: a cited URL to the passages worth showing the judge — the live-web flow's front half.

Owns: `netguard` (the SSRF rule), `fetch` (backends, page rules, refusals, PDFs, the deadline, Storage
replay), `passages` (≤200-word passages), `retrieval` (BM25 or MiniLM ranking, top 3), `vectors` (the
MiniLM encoder and its remembered vectors), `fixture_site` (the fixture pages on 127.0.0.1).
Imports: the foundation, cache, context and `source` (a cited PDF is read by `source.pdf_text`).
"""
