"""verdict: from a judge's answer to a decision a person can trust.

Owns: `guard` (a verdict stands only on a verbatim quote), `aggregate` (one label per claim), `review`
(the verdict of a source-document citation, THE AUTO_ACCEPT gate, the review queue's order),
`precision` (citation and reachable precision), `ci_gate` (exit statuses, the CI gate).
Imports: the foundation and `matching`; never a judge client, a flow or a server.
"""
