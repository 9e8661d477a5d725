"""The local judge: a Jev-compatible and an OpenAI-compatible endpoint over a GGUF from the registry.

`weights` assembles and verifies the model file, `model` runs it with llama.cpp, `prompts` turns a
Jev request into chat messages, `readout` turns option log-probabilities into an answer, and
`server` is the HTTP layer (`python -m citecheck judge-server`). Calibration offsets live in the
neutral `citecheck.judge.calibration`, which the judge client imports too; nothing here is imported by it.
"""
