"""judge: asking a model whether the evidence supports a claim, and what its answer must be.

Owns: `judge_contract` (the Choice answer, the JSON verdict, provider envelopes; no I/O), `calibration`
(Choice-readout offsets), `judges` (the Choice and JSON clients, cached), `methods` (JUDGE_METHOD: the
one-pass baselines, pooled, decompose, qa), `local_judge` (the local model behind Jev- and
OpenAI-compatible endpoints).
Imports: the foundation, cache, context, `source`, `matching` and `web` (methods rank sentences with
`web.retrieval`); never the verdict layer or a flow.
"""
