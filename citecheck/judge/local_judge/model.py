"""The llama.cpp backend of the local judge: one GGUF, one forward pass per choice, greedy JSON.

Rules:
- A choice is read from ONE forward pass: the next-token distribution right after the chat
  template's assistant prefix, restricted to the first token of each option word. Options that share
  a first token are told apart by evaluating further tokens (a trie walk).
- JSON answers are generated greedily (temperature 0) under a grammar compiled from the request's
  JSON schema; a schema the grammar compiler cannot take is an error, never a silent fallback.
- A cached prompt prefix is reused only up to a multiple of N_BATCH tokens, so every prompt is
  decoded in the same chunks whatever came before: answers do not depend on history.
- llama.cpp's extra CPU buffer types (weight repacking, AMX tiles) are OFF unless asked for
  (JUDGE_EXTRA_BUFTS=1): on VMs whose CPUID advertises AMX while the hypervisor faults `ldtilecfg`,
  they crash the process (SIGILL) on the first request. `buffer_types` says which is in use.
"""
from __future__ import annotations

import contextlib
import json
import math
import threading
from pathlib import Path

from ... import config
from .weights import require_model

N_CTX = 8192
N_BATCH = 64
"""Prompt tokens per decode batch. A cached prefix is reused only up to a multiple of it, so every
prompt is decoded in the same chunks whatever came before: answers do not depend on history
(llama.cpp's float results differ, slightly, between chunkings)."""


_params_lock = threading.Lock()


@contextlib.contextmanager
def model_params(*, extra_bufts: bool):
    """While loading: llama.cpp's default model parameters with `use_extra_bufts` set as asked.

    llama-cpp-python's `Llama` does not take the flag, so its default-parameters function is wrapped for
    the duration of the load (under a lock: two loads never see each other's choice)."""
    import llama_cpp.llama as llama_module
    low_level = llama_module.llama_cpp
    with _params_lock:
        original = low_level.llama_model_default_params

        def defaults():
            params = original()
            params.use_extra_bufts = extra_bufts
            return params
        low_level.llama_model_default_params = defaults
        try:
            yield
        finally:
            low_level.llama_model_default_params = original


def buffer_types(extra_bufts: bool) -> str:
    """How the weights are held, as /health reports it."""
    return "cpu+extra (repacked / AMX)" if extra_bufts else "cpu (extra buffer types off)"


class LocalModel:
    """One GGUF loaded with llama-cpp-python. Not thread-safe: callers hold `lock`."""

    def __init__(self, path: Path | None = None, *, n_ctx: int = N_CTX, n_threads: int | None = None,
                 name: str = config.LOCAL_MODEL, extra_bufts: bool = False):
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        path = require_model(path)
        self.name = name
        self.lock = threading.Lock()
        self.buffer_types = buffer_types(extra_bufts)
        with model_params(extra_bufts=extra_bufts):
            self.llm = Llama(str(path), n_ctx=n_ctx, n_threads=n_threads, n_batch=N_BATCH, verbose=False)
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ValueError(f"{path.name} carries no chat template")
        vocab = self.llm._model
        self._formatter = Jinja2ChatFormatter(
            template=template, eos_token=vocab.token_get_text(self.llm.token_eos()),
            bos_token=vocab.token_get_text(self.llm.token_bos()) if self.llm.token_bos() >= 0 else "")

    def close(self) -> None:
        self.llm.close()

    # -- tokens
    def prompt_tokens(self, messages: list[dict]) -> list[int]:
        """The chat template applied to the messages, ending with the assistant's turn prefix."""
        result = self._formatter(messages=messages)
        return self.llm.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)

    def option_tokens(self, option: str) -> list[int]:
        tokens = self.llm.tokenize(option.encode("utf-8"), add_bos=False, special=False)
        if not tokens:
            raise ValueError(f"option {option!r} has no tokens")
        return tokens

    # -- evaluation
    def _reuse(self, tokens: list[int]) -> int:
        """Truncate the KV cache to the longest cached prefix of `tokens` that ends on a batch boundary
        (and leaves at least the last token to decode); returns its length."""
        llm = self.llm
        limit = min(llm.n_tokens, len(tokens) - 1)
        cached = llm.input_ids[:limit]
        keep = 0
        while keep < limit and cached[keep] == tokens[keep]:
            keep += 1
        llm.n_tokens = keep - keep % llm.n_batch
        return llm.n_tokens

    def _eval_from(self, tokens: list[int]) -> list[float]:
        """Evaluate `tokens` (reusing an aligned cached prefix); log-probs of the next token."""
        import llama_cpp
        import numpy as np
        llm = self.llm
        if len(tokens) > llm.n_ctx():
            raise ValueError(f"prompt has {len(tokens)} tokens; the local judge's context holds {llm.n_ctx()}")
        keep = self._reuse(tokens)
        llm.eval(tokens[keep:])
        row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(llm.n_vocab(),))
        row = row.astype(np.float64)
        top = row.max()
        return (row - top - math.log(np.exp(row - top).sum())).tolist()

    def option_logprobs(self, messages: list[dict], options: list[str]) -> tuple[dict[str, float], int]:
        """({option: log P(option starts the answer)}, prompt token count) from one forward pass.

        Options sharing leading tokens are separated by evaluating those tokens too.
        """
        prompt = self.prompt_tokens(messages)
        sequences = {option: self.option_tokens(option) for option in options}
        result: dict[str, float] = {}

        def walk(prefix: list[int], row: list[float], group: dict[str, list[int]], depth: int, acc: float):
            by_token: dict[int, list[str]] = {}
            for option, seq in group.items():
                by_token.setdefault(seq[depth], []).append(option)
            for token, members in by_token.items():
                score = acc + row[token]
                deeper = {m: group[m] for m in members if len(group[m]) > depth + 1}
                for m in members:
                    if m not in deeper or len(members) == 1:
                        result[m] = score        # unique from here on (or exhausted): its mass is this prefix's
                if len(members) > 1 and deeper:
                    walk(prefix + [token], self._eval_from(prefix + [token]), deeper, depth + 1, score)

        walk(prompt, self._eval_from(prompt), sequences, 0, 0.0)
        return {option: result[option] for option in options}, len(prompt)

    def chat(self, messages: list[dict], *, schema: dict | None = None, json_mode: bool = False,
             max_tokens: int = 512, temperature: float = 0.0, seed: int | None = None) -> dict:
        """{content, finish_reason, prompt_tokens, completion_tokens}; greedy when temperature is 0."""
        from llama_cpp.llama_grammar import LlamaGrammar
        grammar = None
        if schema is not None:
            try:
                grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            except Exception as exc:   # the converter raises assorted errors for schemas it cannot take
                raise ValueError(f"JSON schema cannot be compiled to a grammar: {exc}") from None
        elif json_mode:
            from llama_cpp.llama_grammar import JSON_GBNF
            grammar = LlamaGrammar.from_string(JSON_GBNF, verbose=False)
        prompt = self.prompt_tokens(messages)
        if len(prompt) + max_tokens > self.llm.n_ctx():
            raise ValueError(f"prompt has {len(prompt)} tokens; with max_tokens={max_tokens} it does not fit "
                             f"the local judge's context of {self.llm.n_ctx()}")
        self._reuse(prompt)           # create_completion then reuses exactly this aligned prefix
        out = self.llm.create_completion(prompt, max_tokens=max_tokens, temperature=temperature,
                                         top_k=1 if temperature == 0 else 40, seed=seed, grammar=grammar,
                                         stop=[self._formatter.eos_token])
        choice = out["choices"][0]
        return {"content": choice["text"], "finish_reason": choice.get("finish_reason") or "stop",
                "prompt_tokens": out["usage"]["prompt_tokens"],
                "completion_tokens": out["usage"]["completion_tokens"]}
