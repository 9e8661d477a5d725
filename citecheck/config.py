"""Environment variables, read in this one module and nowhere else.

Rule: settings are read when asked for (never frozen at import), a missing secret raises
`MissingSetting` naming the variable, and no function here returns a secret inside a message.
"""
from __future__ import annotations

import os
from pathlib import Path

SECRETS = ("TYPESAFE_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CRAWLBASE_TOKEN", "CRAWLBASE_JS_TOKEN",
           "JUDGE_SERVER_KEY")

LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
"""The model the local judge serves, and so the one every published cached answer came from."""

DEFAULTS = {
    "TYPESAFE_ENDPOINT": "",
    "TYPESAFE_MODEL": LOCAL_MODEL,
    "JUDGE_TIMEOUT": "120",
    "OPENAI_BASE_URL": "https://api.openai.com/v1",
    "ANTHROPIC_BASE_URL": "https://api.anthropic.com",
    "OLLAMA_HOST": "http://127.0.0.1:11434",
    "JUDGE_PROVIDER": "openai",
    "JUDGE_MODEL": "",
    "CRAWLBASE_API_URL": "",
    "CRAWLBASE_TIMEOUT": "90",
    "FETCH_TIMEOUT": "20",
    "FETCH_MAX_BYTES": "5000000",
    "CITECHECK_SITE_PORT": "8731",
    "CITECHECK_CACHE": "json_cache.json",
    "CITECHECK_OFFLINE": "0",
    "BATCH_CONCURRENCY": "4",
    "AUDIT_DB": "audit.db",
    "AUTO_ACCEPT": "0.8",
    "CITECHECK_ALLOW_PRIVATE": "0",
    "CITECHECK_ALLOW_HOSTS": "",
    "API_MAX_URLS": "10",
    "API_MAX_CLAIM_CHARS": "2000",
    "API_MAX_BODY_BYTES": "65536",
    "API_DEADLINE": "60",
    "API_CONCURRENCY": "4",
    "API_QUEUE_TIMEOUT": "5",
}

DEFAULT_JUDGE_MODELS = {"openai": LOCAL_MODEL, "anthropic": "claude-3-5-haiku-latest", "ollama": "llama3.1"}
"""openai's default is the local judge's model (served on an OpenAI-compatible endpoint), so offline
replays hit the published cache; set JUDGE_MODEL (e.g. gpt-4o-mini) for a hosted model."""


class MissingSetting(RuntimeError):
    """A required environment variable is unset; the message names it, never a value."""

    def __init__(self, name: str, hint: str = ""):
        self.name = name
        super().__init__(f"{name} is not set" + (f": {hint}" if hint else ""))


def get(name: str) -> str:
    """The variable's value, or its documented default ('' when it has none)."""
    return os.environ.get(name, DEFAULTS.get(name, "")).strip()


def secret(name: str, hint: str = "") -> str:
    """A secret's value; raises MissingSetting(name) when unset or empty."""
    value = os.environ.get(name, "").strip()
    if not value:
        raise MissingSetting(name, hint)
    return value


def has(name: str) -> bool:
    """True when the variable is set to a non-empty value."""
    return bool(os.environ.get(name, "").strip())


def flag(name: str) -> bool:
    """A boolean variable: 1/true/yes/on are true."""
    return get(name).lower() in {"1", "true", "yes", "on"}


def offline() -> bool:
    """CITECHECK_OFFLINE=1: replay only, a cache miss is an error and no network call is made."""
    return flag("CITECHECK_OFFLINE")


LOCAL_MODEL_ENV = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                   "TOKENIZERS_PARALLELISM": "false", "TRANSFORMERS_VERBOSITY": "error"}
"""Set before a bundled model (MiniLM) is loaded: no hub look-ups, no progress bars."""


def use_local_models() -> None:
    """Write LOCAL_MODEL_ENV into the environment (the one place besides notebook.setup that writes it)."""
    os.environ.update(LOCAL_MODEL_ENV)


def allow_origin(host: str, port: int) -> None:
    """Let the direct fetcher reach this one private origin (adds host:port to CITECHECK_ALLOW_HOSTS)."""
    origins = [o.strip() for o in get("CITECHECK_ALLOW_HOSTS").split(",") if o.strip()]
    if f"{host}:{port}" not in origins:
        os.environ["CITECHECK_ALLOW_HOSTS"] = ",".join([*origins, f"{host}:{port}"])


def cache_path() -> Path:
    return Path(get("CITECHECK_CACHE"))


def auto_accept() -> float:
    """AUTO_ACCEPT as a float in [0, 1]; a bad value is an error naming the variable."""
    raw = get("AUTO_ACCEPT")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"AUTO_ACCEPT must be a number between 0 and 1, got {raw!r}") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"AUTO_ACCEPT must be between 0 and 1, got {value}")
    return value


def judge_timeout() -> float:
    """Seconds one judge call may take (a CPU-only local model needs far more than the SDK's 10 s)."""
    raw = get("JUDGE_TIMEOUT")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"JUDGE_TIMEOUT must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"JUDGE_TIMEOUT must be positive, got {value}")
    return value


def batch_concurrency() -> int:
    raw = get("BATCH_CONCURRENCY")
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"BATCH_CONCURRENCY must be a whole number >= 1, got {raw!r}")
    return int(raw)


def positive(name: str, *, integer: bool = False) -> float:
    """A variable that must be a positive number (a whole one when `integer`); errors name it."""
    raw = get(name)
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        kind = "a whole number" if integer else "a number"
        raise ValueError(f"{name} must be {kind} > 0, got {raw!r}") from None
    if not value > 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def judge_provider() -> str:
    provider = get("JUDGE_PROVIDER").lower()
    if provider not in DEFAULT_JUDGE_MODELS:
        raise ValueError(f"JUDGE_PROVIDER must be one of openai, anthropic, ollama; got {provider!r}")
    return provider


def judge_model() -> str:
    return get("JUDGE_MODEL") or DEFAULT_JUDGE_MODELS[judge_provider()]


def redact(text: str) -> str:
    """Replace the value of every set secret in `text` with the variable's name."""
    for name in SECRETS:
        value = os.environ.get(name, "").strip()
        if len(value) >= 4:
            text = text.replace(value, f"<{name}>")
    return text
