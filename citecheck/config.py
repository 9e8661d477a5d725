"""Settings: every environment variable is read here, once, into a `Settings` object.

Rules:
- No other module reads or writes `os.environ`. Entry points (the CLI, the API, the notebook set-up,
  `record`) call `Settings.from_env()` once and pass the result down (inside a `context.RunContext`).
- Every value is validated when read; a bad value is a ValueError naming the variable.
- Secrets live in `Secrets`: a missing one raises `MissingSetting` naming the variable; no repr,
  message or pickle ever holds a value (unpickled on another machine, they are read from *its*
  environment, so a task graph never carries a key).
- Environments for child processes (notebook kernels, the judge server) are built here too.
- `printable` is the one escape for text a command prints (ids, quotes, claims, messages, pages):
  terminal control characters become visible backslash escapes (ESC is `\\x1b`), so input cannot drive a
  terminal or forge a line in a CI log.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

SECRETS = ("TYPESAFE_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CRAWLBASE_TOKEN", "CRAWLBASE_JS_TOKEN",
           "JUDGE_SERVER_KEY", "REVIEW_TOKEN")
SERVICE_SECRETS = ("JUDGE_SERVER_KEY", "REVIEW_TOKEN")
"""Secrets of the services we run (judge-server, /review): a check never uses them, so no worker gets them."""

LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
"""The model the local judge serves, and so the one every published cached answer came from."""
HOSTED_CHOICE_MODEL = "jev-latest"
"""typesafe-sdk's default model (typesafe_sdk.constants.DEFAULT_MODEL): what the hosted Jev API serves."""
HOSTED_OPENAI_MODEL = "gpt-4o-mini"
"""The JSON judge's model on OpenAI's own API: the smallest hosted model with strict JSON-schema output."""

DEFAULTS = {
    "TYPESAFE_ENDPOINT": "",
    "TYPESAFE_MODEL": "",
    "JUDGE_TIMEOUT": "300",
    "JUDGE_RETRIES": "2",
    "OPENAI_BASE_URL": "https://api.openai.com/v1",
    "ANTHROPIC_BASE_URL": "https://api.anthropic.com",
    "OLLAMA_HOST": "",
    "JUDGE_PROVIDER": "",
    "JUDGE_MODEL": "",
    "JUDGE_METHOD": "pooled",
    "JUDGE_CALL_BUDGET": "8",
    "CRAWLBASE_API_URL": "",
    "CRAWLBASE_TIMEOUT": "90",
    "FETCH_TIMEOUT": "20",
    "FETCH_MAX_BYTES": "5000000",
    "FETCH_DEADLINE": "60",
    "MAX_PASSAGES": "32",
    "RETRIEVAL": "bm25",
    "CITECHECK_SITE_PORT": "8731",
    "CITECHECK_CACHE": "json_cache.json",
    "CITECHECK_CACHE_STORE": "",
    "CACHE_MAX_AGE": "0",
    "CITECHECK_OFFLINE": "0",
    "CITECHECK_NOTEBOOK_LIVE": "0",
    "BATCH_CONCURRENCY": "4",
    "AUDIT_DB": "",
    "AUTO_ACCEPT": "",
    "AUTO_ACCEPT_TABLE": "",
    "CITECHECK_ALLOW_PRIVATE": "0",
    "CITECHECK_ALLOW_HOSTS": "",
    "CITECHECK_IGNORE_ROBOTS": "0",
    "ROBOTS_MAX_AGE": "86400",
    "HOST_CONCURRENCY": "2",
    "HOST_RATE": "1",
    "API_MAX_URLS": "10",
    "API_MAX_CLAIM_CHARS": "2000",
    "API_MAX_BODY_BYTES": "65536",
    "API_DEADLINE": "60",
    "API_CONCURRENCY": "4",
    "API_QUEUE_TIMEOUT": "5",
    "API_HEADER_TIMEOUT": "10",
    "API_BODY_TIMEOUT": "20",
    "JUDGE_EXTRA_BUFTS": "0",
    "NEAR_MISS_MAX_CHARS": "5000",
    "ANSWER_MAX_BYTES": str(4 * 1024 * 1024),
    "ANSWER_MAX_MARKERS": "1000",
    "ANSWER_MAX_REPORT_BYTES": str(16 * 1024 * 1024),
    "UNCITED_MAX_CALLS": "20",
    "CLAIM_MAX_CHARS": "2000",
    "PDF_MAX_BYTES": str(20 * 1024 * 1024),
    "PDF_MAX_PAGES": "300",
    "PDF_MAX_SECONDS": "60",
    "EXTRACT_MAX_SECONDS": "10",
    "CLUSTER_CONNECT_TIMEOUT": "10",
    "CLUSTER_TLS_CA": "",
    "CLUSTER_TLS_CERT": "",
    "CLUSTER_TLS_KEY": "",
}

RETRIEVALS = ("minilm", "bm25")
"""RETRIEVAL's values: how the shown passages are ranked (citecheck.web.retrieval)."""
JUDGE_METHODS = ("one_pass", "choice", "json", "pooled", "decompose", "qa", "chunks")
"""JUDGE_METHOD's values (citecheck.judge.methods; default pooled, the method chosen on tune); one_pass keeps each
flow's baseline (JSON in verify, Choice in check)."""

OLLAMA_DEFAULT_HOST = "http://127.0.0.1:11434"
"""Where the ollama judge is asked when OLLAMA_HOST is unset (JUDGE_PROVIDER=ollama named it)."""
JSON_PROVIDERS = ("openai", "anthropic", "ollama")
"""JUDGE_PROVIDER's values; unset, it is the first of these configured (`json_providers`), else openai."""
ENDPOINT_VARIABLE = {"typesafe": "TYPESAFE_ENDPOINT", "openai": "OPENAI_BASE_URL",
                     "anthropic": "ANTHROPIC_BASE_URL", "ollama": "OLLAMA_HOST"}
MODEL_VARIABLE = {"typesafe": "TYPESAFE_MODEL", "openai": "JUDGE_MODEL", "anthropic": "JUDGE_MODEL",
                  "ollama": "JUDGE_MODEL"}
MODEL_FIELD = {"typesafe": "typesafe_model", "openai": "judge_model"}
"""The Settings field each judge whose model can be discovered asks for (`models_to_discover`)."""
DEFAULT_JUDGE_MODELS = {"openai": LOCAL_MODEL, "anthropic": "claude-3-5-haiku-latest", "ollama": "llama3.1"}
"""openai's default is the local judge's model (served on an OpenAI-compatible endpoint), so offline
replays hit the published cache; with OPENAI_API_KEY and OpenAI's own base URL it is HOSTED_OPENAI_MODEL
(`default_models`)."""

GATE_TABLE = Path(__file__).resolve().parent.parent / "data" / "gate.json"
"""AUTO_ACCEPT_TABLE's default: the calibration table `calibrate --write` keeps (citecheck.verdict.review)."""

JOURNAL = Path("audit.db")
"""Where `batch` journals (and /review and `calibrate` read) when AUDIT_DB is not set, in `defaults_in`."""

LOCAL_MODEL_ENV = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                   "TOKENIZERS_PARALLELISM": "false", "TRANSFORMERS_VERBOSITY": "error"}
"""Set before a bundled model (MiniLM) is loaded: no hub look-ups, no progress bars."""
QUIET_ENV = {**LOCAL_MODEL_ENV, "TQDM_DISABLE": "1", "PYTHONHASHSEED": "0"}
"""What a notebook kernel runs with: the bundled models offline, no progress bars, stable hashing."""

_TRUE = {"1", "true", "yes", "on"}


class MissingSetting(RuntimeError):
    """A required environment variable is unset; the message names it, never a value."""

    def __init__(self, name: str, hint: str = ""):
        self.name = name
        super().__init__(f"{name} is not set" + (f": {hint}" if hint else ""))


REVIEW_TOKEN_MIN = 16
REVIEW_TOKEN_BITS = 64
GENERATE_TOKEN = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'
WORD_BITS = 13
"""What a run of letters in one case (or Capitalised) costs a guesser per started 8 letters: one common
word of some 10,000 (Password, token, FAKE)."""
GUESS_CHARS = 256
"""Characters of REVIEW_TOKEN `guess_bits` counts (the rest only make it stronger)."""
_CLASS_BITS = {"lower": math.log2(26), "upper": math.log2(26), "digit": math.log2(10), "other": math.log2(33)}


def _class_bits(ch: str) -> float:
    kind = "lower" if ch.islower() else "upper" if ch.isupper() else "digit" if ch.isdigit() else "other"
    return _CLASS_BITS[kind]


def _run_end(token: str, i: int) -> int:
    """Where the run from token[i] of characters each one code point up, down or the same as the last ends."""
    if i + 1 >= len(token) or (step := ord(token[i + 1]) - ord(token[i])) not in (-1, 0, 1):
        return i + 1
    j = i + 2
    while j < len(token) and ord(token[j]) - ord(token[j - 1]) == step:
        j += 1
    return j


def _repeat_end(token: str, i: int) -> int:
    """Where the run from token[i] of 4 or more characters that already stand earlier ends (i: none)."""
    length = 4
    while i + length <= len(token) and token.find(token[i:i + length], 0, i + length - 1) >= 0:
        length += 1
    return i + length - 1 if length > 4 else i


def _word_end(token: str, i: int) -> int:
    """Where the run from token[i] of letters in one case, or Capitalised, ends (i: no letter there)."""
    if not token[i].isalpha():
        return i
    upper = token[i].isupper() and i + 1 < len(token) and token[i + 1].isupper()
    j = i + 1
    while j < len(token) and (token[j].isupper() if upper else token[j].islower()):
        j += 1
    return j


def guess_bits(token: str) -> float:
    """The bits a guesser needs, counted left to right over the first GUESS_CHARS characters the cheap way:
    a run of 3 or more characters each one up, down or the same as the last (abc, 4321, aaaa) costs its
    first character, its length and its direction; 4 or more characters repeating earlier ones where and
    how many; a run of 3 or more letters in one case or Capitalised at most WORD_BITS per started 8 letters
    (a common word + digits is cheap); any other character its class (26, 26, 10 or 33)."""
    token, bits, i = token[:GUESS_CHARS], 0.0, 0
    while i < len(token):
        end = _run_end(token, i)
        if end - i >= 3:
            bits, i = bits + _class_bits(token[i]) + math.log2(end - i) + 1, end
            continue
        end = _repeat_end(token, i)
        if end > i:
            bits, i = bits + math.log2(i) + math.log2(end - i), end
            continue
        end = _word_end(token, i)
        if end - i >= 3:
            spelled = sum(map(_class_bits, token[i:end]))
            bits, i = bits + min(spelled, WORD_BITS * math.ceil((end - i) / 8)), end
            continue
        bits, i = bits + _class_bits(token[i]), i + 1
    return bits


def review_token_problem(token: str) -> str | None:
    """Why REVIEW_TOKEN is too weak (None: strong enough), never quoting it. Strong: at least
    REVIEW_TOKEN_MIN characters, 10 distinct ones, two kinds (lower case, upper case, digits, other), and
    at least REVIEW_TOKEN_BITS bits both by its length times the Shannon entropy of its character counts
    (repeats lower it) and as a guesser counts them (`guess_bits`: words, sequences and repeats are cheap)."""
    if len(token) < REVIEW_TOKEN_MIN:
        why = f"must be at least {REVIEW_TOKEN_MIN} characters"
    elif len(set(token)) < 10:
        why = "is too predictable (fewer than 10 distinct characters)"
    elif sum(any(kind(ch) for ch in token) for kind in (str.islower, str.isupper, str.isdigit,
                                                          lambda ch: not ch.isalnum())) < 2:
        why = "is too predictable (one kind of character only: mix cases, digits or symbols)"
    elif len(token) * -sum(n / len(token) * math.log2(n / len(token))
                           for n in collections.Counter(token).values()) < REVIEW_TOKEN_BITS:
        why = f"is too predictable (under {REVIEW_TOKEN_BITS} bits by its character counts: too many repeats)"
    elif guess_bits(token) < REVIEW_TOKEN_BITS:
        why = (f"is too predictable (under {REVIEW_TOKEN_BITS} bits as a guesser counts them: words, "
               "sequences such as 123 or abc, repeated characters)")
    else:
        return None
    return f"REVIEW_TOKEN {why}; generate one with: {GENERATE_TOKEN}"


class Secrets:
    """The secret variables that are set. Never shows a value; pickles as 'read them again where I land'."""

    def __init__(self, values: Mapping[str, str]):
        self._values = {name: value for name, value in values.items() if value}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Secrets":
        environ = os.environ if environ is None else environ
        return cls({name: environ.get(name, "").strip() for name in SECRETS})

    def has(self, name: str) -> bool:
        return name in self._values

    def get(self, name: str, default: str = "") -> str:
        return self._values.get(name, default)

    def require(self, name: str, hint: str = "") -> str:
        """The secret's value; MissingSetting(name) when unset or empty."""
        if name not in self._values:
            raise MissingSetting(name, hint)
        return self._values[name]

    def environ(self, names: tuple[str, ...] = SECRETS) -> dict[str, str]:
        """The held secrets among `names` as environment variables, for a child process (never a file)."""
        return {name: value for name, value in self._values.items() if name in names}

    def redact(self, text: str) -> str:
        """Replace the value of every held secret in `text` with the variable's name."""
        for name, value in self._values.items():
            if len(value) >= 4:
                text = text.replace(value, f"<{name}>")
        return text

    def __repr__(self) -> str:
        return f"Secrets({', '.join(sorted(self._values)) or 'none'})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Secrets) and self._values == other._values

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values)))

    def __reduce__(self):
        return (Secrets.from_env, ())


@dataclass(frozen=True)
class ApiLimits:
    """The /verify service's bounds (API_* variables)."""
    max_urls: int = 10
    max_claim_chars: int = 2000
    max_body_bytes: int = 65536
    deadline: float = 60.0
    concurrency: int = 4
    queue_timeout: float = 5.0
    header_timeout: float = 10.0
    body_timeout: float = 20.0

    @property
    def parse_slots(self) -> int:
        """Sandboxed parses at once in a server (the API's and MCP's parse lane): 2 x API_CONCURRENCY."""
        return 2 * self.concurrency


@dataclass(frozen=True)
class PdfLimits:
    """What a PDF source may cost (PDF_* variables); over a limit it is refused, never read in part."""
    max_bytes: int = 20 * 1024 * 1024
    max_pages: int = 300
    max_seconds: float = 60.0


@dataclass(frozen=True)
class ClusterSettings:
    """`batch --cluster`: how long a scheduler has to answer, and the mutual-TLS files for tls:// (PEM)."""
    connect_timeout: float = 10.0
    tls_ca: str = ""
    tls_cert: str = ""
    tls_key: str = ""


@dataclass(frozen=True)
class Settings:
    """Every setting of a run, validated. `Settings()` is the documented defaults with no secrets."""
    typesafe_endpoint: str = ""
    typesafe_model: str = LOCAL_MODEL
    judge_timeout: float = 300.0
    judge_retries: int = 2
    openai_base_url: str = DEFAULTS["OPENAI_BASE_URL"]
    anthropic_base_url: str = DEFAULTS["ANTHROPIC_BASE_URL"]
    ollama_host: str = ""               # OLLAMA_HOST when set (the client then asks OLLAMA_DEFAULT_HOST)
    judge_provider: str = "openai"
    judge_model: str = LOCAL_MODEL
    judge_method: str = "pooled"
    judge_call_budget: int = 8
    crawlbase_api_url: str = ""
    crawlbase_timeout: float = 90.0
    fetch_timeout: float = 20.0
    fetch_max_bytes: int = 5_000_000
    fetch_deadline: float = 60.0
    max_passages: int = 32
    retrieval: str = "bm25"
    site_port: int = 8731
    cache_path: Path = Path("json_cache.json")
    cache_store: str = ""
    cache_max_age: int = 0
    offline: bool = False
    notebook_live: bool = False         # CITECHECK_NOTEBOOK_LIVE: notebooks 04-05 ask a live judge too
    batch_concurrency: int = 4
    audit_db: Path | None = None        # AUDIT_DB when set: verify, /verify and check audit there too
    auto_accept: float | None = None    # AUTO_ACCEPT when set: every model; None: per model, from the table
    auto_accept_table: Path = GATE_TABLE
    allow_private: bool = False
    allow_hosts: frozenset[tuple[str, int]] = frozenset()
    ignore_robots: bool = False         # CITECHECK_IGNORE_ROBOTS=1: robots.txt not read (one's own sites)
    robots_max_age: float = 86400.0     # seconds a host's robots.txt is kept (citecheck.web.robots)
    host_concurrency: int = 2           # requests in flight to one origin (citecheck.web.fetch.hosts)
    host_rate: float = 1.0              # requests started per second to one origin
    api: ApiLimits = field(default_factory=ApiLimits)
    judge_extra_bufts: bool = False
    near_miss_max_chars: int = 5000
    answer_max_bytes: int = 4 * 1024 * 1024
    answer_max_markers: int = 1000      # citations read from one answer; the rest: one problem line
    answer_max_report_bytes: int = 16 * 1024 * 1024   # one answer's outputs or report: else one line
    uncited_max_calls: int = 20         # questions of uncited sentences to the answer's own sources; 0: none
    claim_max_chars: int = 2000          # a batch claim longer than this is a skipped line
    pdf: PdfLimits = field(default_factory=PdfLimits)
    extract_max_seconds: float = 10.0   # an HTML page's text extraction (lxml, trafilatura), in the sandbox
    cluster: ClusterSettings = field(default_factory=ClusterSettings)
    defaults_in: Path = Path(".")       # the folder of the default files (json_cache.json, audit.db)
    named_models: frozenset[str] = frozenset()   # TYPESAFE_MODEL / JUDGE_MODEL as set: the names rows give
    discover: tuple[str, ...] = ()      # judges whose endpoint's list names the model (`models_to_discover`)
    secrets: Secrets = field(default_factory=lambda: Secrets({}), compare=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *,
                 defaults_in: Path = Path("."), cache_in: Path | None = None) -> "Settings":
        """Read and validate every variable (defaults from DEFAULTS). `defaults_in` is the folder the
        default files are in (the export json_cache.json, hence its store, and the journal audit.db): the
        current directory for the CLI, the repository for a notebook, whatever its working directory;
        `cache_in`, when given, is the cache's own (the CLI outside the cookbook: `user_cache`). A path the
        reader sets (CITECHECK_CACHE, AUDIT_DB, ...) resolves against the current directory."""
        environ = os.environ if environ is None else environ
        read = _Reader(environ)
        secrets = Secrets.from_env(environ)
        if secrets.has("REVIEW_TOKEN") and (weak := review_token_problem(secrets.get("REVIEW_TOKEN"))):
            raise ValueError(weak)
        configured = json_providers(secrets, read.text("OPENAI_BASE_URL"), read.text("OLLAMA_HOST"))
        provider = read.text("JUDGE_PROVIDER").lower() or (configured + ("openai",))[0]
        if provider not in JSON_PROVIDERS:
            raise ValueError(f"JUDGE_PROVIDER must be one of openai, anthropic, ollama; got {provider!r}")
        method = read.text("JUDGE_METHOD").lower()
        if method not in JUDGE_METHODS:
            raise ValueError(f"JUDGE_METHOD must be one of {', '.join(JUDGE_METHODS)}; got {method!r}")
        retrieval = read.text("RETRIEVAL").lower()
        if retrieval not in RETRIEVALS:
            raise ValueError(f"RETRIEVAL must be one of {', '.join(RETRIEVALS)}; got {retrieval!r}")
        choice_model, json_model = default_models(provider, read.text("TYPESAFE_ENDPOINT"),
                                                  read.text("OPENAI_BASE_URL"), secrets)
        return cls(
            typesafe_endpoint=read.text("TYPESAFE_ENDPOINT"),
            typesafe_model=read.text("TYPESAFE_MODEL") or choice_model,
            judge_timeout=read.positive("JUDGE_TIMEOUT"),
            judge_retries=read.count("JUDGE_RETRIES"),
            openai_base_url=read.text("OPENAI_BASE_URL"),
            anthropic_base_url=read.text("ANTHROPIC_BASE_URL"),
            ollama_host=read.text("OLLAMA_HOST"),
            judge_provider=provider,
            judge_model=read.text("JUDGE_MODEL") or json_model,
            judge_method=method,
            judge_call_budget=read.positive("JUDGE_CALL_BUDGET", integer=True),
            crawlbase_api_url=read.text("CRAWLBASE_API_URL"),
            crawlbase_timeout=read.positive("CRAWLBASE_TIMEOUT"),
            fetch_timeout=read.positive("FETCH_TIMEOUT"),
            fetch_max_bytes=read.positive("FETCH_MAX_BYTES", integer=True),
            fetch_deadline=read.positive("FETCH_DEADLINE"),
            max_passages=read.positive("MAX_PASSAGES", integer=True),
            retrieval=retrieval,
            site_port=read.port("CITECHECK_SITE_PORT"),
            cache_path=read.path("CITECHECK_CACHE", cache_in or defaults_in),
            cache_store=read.cache_store(),
            cache_max_age=read.count("CACHE_MAX_AGE"),
            offline=read.flag("CITECHECK_OFFLINE"),
            notebook_live=read.flag("CITECHECK_NOTEBOOK_LIVE"),
            batch_concurrency=read.positive("BATCH_CONCURRENCY", integer=True),
            audit_db=Path(read.text("AUDIT_DB")) if read.text("AUDIT_DB") else None,
            auto_accept=read.fraction("AUTO_ACCEPT") if read.text("AUTO_ACCEPT") else None,
            auto_accept_table=Path(read.text("AUTO_ACCEPT_TABLE") or GATE_TABLE),
            allow_private=read.flag("CITECHECK_ALLOW_PRIVATE"),
            allow_hosts=parse_origins(read.text("CITECHECK_ALLOW_HOSTS")),
            ignore_robots=read.flag("CITECHECK_IGNORE_ROBOTS"),
            robots_max_age=read.positive("ROBOTS_MAX_AGE"),
            host_concurrency=read.positive("HOST_CONCURRENCY", integer=True),
            host_rate=read.positive("HOST_RATE"),
            api=ApiLimits(max_urls=read.positive("API_MAX_URLS", integer=True),
                          max_claim_chars=read.positive("API_MAX_CLAIM_CHARS", integer=True),
                          max_body_bytes=read.positive("API_MAX_BODY_BYTES", integer=True),
                          deadline=read.positive("API_DEADLINE"),
                          concurrency=read.positive("API_CONCURRENCY", integer=True),
                          queue_timeout=read.positive("API_QUEUE_TIMEOUT"),
                          header_timeout=read.positive("API_HEADER_TIMEOUT"),
                          body_timeout=read.positive("API_BODY_TIMEOUT")),
            judge_extra_bufts=read.flag("JUDGE_EXTRA_BUFTS"),
            near_miss_max_chars=read.positive("NEAR_MISS_MAX_CHARS", integer=True),
            answer_max_bytes=read.positive("ANSWER_MAX_BYTES", integer=True),
            answer_max_markers=read.positive("ANSWER_MAX_MARKERS", integer=True),
            answer_max_report_bytes=read.positive("ANSWER_MAX_REPORT_BYTES", integer=True),
            uncited_max_calls=read.count("UNCITED_MAX_CALLS"),
            claim_max_chars=read.positive("CLAIM_MAX_CHARS", integer=True),
            pdf=PdfLimits(max_bytes=read.positive("PDF_MAX_BYTES", integer=True),
                          max_pages=read.positive("PDF_MAX_PAGES", integer=True),
                          max_seconds=read.positive("PDF_MAX_SECONDS")),
            extract_max_seconds=read.positive("EXTRACT_MAX_SECONDS"),
            cluster=ClusterSettings(connect_timeout=read.positive("CLUSTER_CONNECT_TIMEOUT"),
                                    tls_ca=read.text("CLUSTER_TLS_CA"),
                                    tls_cert=read.text("CLUSTER_TLS_CERT"),
                                    tls_key=read.text("CLUSTER_TLS_KEY")),
            defaults_in=defaults_in,
            named_models=frozenset(filter(None, (read.text("TYPESAFE_MODEL"), read.text("JUDGE_MODEL")))),
            discover=models_to_discover(read.text, provider),
            secrets=secrets,
        )

    @property
    def choice_configured(self) -> bool:
        """A Choice endpoint is configured: TYPESAFE_API_KEY or TYPESAFE_ENDPOINT."""
        return self.secrets.has("TYPESAFE_API_KEY") or bool(self.typesafe_endpoint)

    @property
    def json_providers(self) -> tuple[str, ...]:
        """The JSON providers configured by their own variables, in JSON_PROVIDERS order."""
        return json_providers(self.secrets, self.openai_base_url, self.ollama_host)

    @property
    def choice_via(self) -> str:
        """Where Choice questions go: "typesafe" when a Choice endpoint is configured; else JUDGE_PROVIDER
        when a JSON provider is; else "typesafe" (a no-key replay keeps the committed cache's keys)."""
        if self.choice_configured or not self.json_providers:
            return "typesafe"
        return self.judge_provider

    @property
    def choice_model(self) -> str:
        """The model Choice questions are cached under: TYPESAFE_MODEL on typesafe, else JUDGE_MODEL."""
        return self.typesafe_model if self.choice_via == "typesafe" else self.judge_model

    def answering_name(self, asked: str, reported: str | None) -> str:
        """The name of the model that answered a call asked of `asked`: `asked` when the reader set it
        (TYPESAFE_MODEL / JUDGE_MODEL), else the name the server reported (its cache entry's stamp), so a
        default (the local judge's name) never names another endpoint's model."""
        return asked if asked in self.named_models or not reported else reported

    @property
    def only_choice(self) -> bool:
        """A Choice endpoint and no JSON provider: methods that generate JSON cannot run (they fall back)."""
        return self.choice_configured and not self.json_providers

    @property
    def journal(self) -> Path:
        """The audit DB `batch` writes and /review and `calibrate` read: AUDIT_DB, else audit.db in
        `defaults_in`."""
        return self.audit_db or self.defaults_in / JOURNAL

    def replace(self, **changes) -> "Settings":
        """A copy with some settings changed (e.g. a dry run: offline, one more allowed origin)."""
        return dataclasses.replace(self, **changes)

    def allowing(self, host: str, port: int) -> "Settings":
        """A copy whose direct fetcher may also reach this one private origin."""
        return self.replace(allow_hosts=self.allow_hosts | {(host.lower(), port)})


class _Reader:
    """Validating reads of one environment mapping; every error names the variable."""

    def __init__(self, environ: Mapping[str, str]):
        self.environ = environ

    def text(self, name: str) -> str:
        return str(self.environ.get(name, DEFAULTS.get(name, ""))).strip()

    def path(self, name: str, defaults_in: Path) -> Path:
        """The path the variable names, else its default file in `defaults_in`."""
        given = str(self.environ.get(name, "")).strip()
        return Path(given) if given else defaults_in / DEFAULTS[name]

    def flag(self, name: str) -> bool:
        return self.text(name).lower() in _TRUE

    def positive(self, name: str, *, integer: bool = False):
        raw = self.text(name)
        try:
            value = int(raw) if integer else float(raw)
        except ValueError:
            kind = "a whole number" if integer else "a number"
            raise ValueError(f"{name} must be {kind} > 0, got {raw!r}") from None
        if not value > 0 or value != value or value == float("inf"):
            raise ValueError(f"{name} must be > 0, got {value}")
        return value

    def cache_store(self) -> str:
        """CITECHECK_CACHE_STORE: a path, empty (beside the export) or 'off' (replay the export alone)."""
        store = self.text("CITECHECK_CACHE_STORE")
        if store.lower() == "off" and not self.flag("CITECHECK_OFFLINE"):
            raise ValueError("CITECHECK_CACHE_STORE=off needs CITECHECK_OFFLINE=1: a live run records into the store")
        return store

    def count(self, name: str) -> int:
        raw = self.text(name)
        if not raw.isdigit():
            raise ValueError(f"{name} must be a whole number >= 0, got {raw!r}")
        return int(raw)

    def fraction(self, name: str) -> float:
        raw = self.text(name)
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"{name} must be a number between 0 and 1, got {raw!r}") from None
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be between 0 and 1, got {value}")
        return value

    def port(self, name: str) -> int:
        raw = self.text(name)
        if not raw.isdigit() or not 0 <= int(raw) <= 65535:
            raise ValueError(f"{name} must be a port number (0-65535), got {raw!r}")
        return int(raw)


def user_cache() -> Path:
    """Where the CLI keeps json_cache.json and its store when run outside the cookbook: the user cache
    directory (platformdirs: $XDG_CACHE_HOME/citecheck, else ~/.cache/citecheck on Linux)."""
    import platformdirs
    return Path(platformdirs.user_cache_dir("citecheck", appauthor=False))


def default_models(provider: str, typesafe_endpoint: str, openai_base_url: str,
                   secrets: Secrets) -> tuple[str, str]:
    """(Choice model, JSON model) when TYPESAFE_MODEL / JUDGE_MODEL are unset: a hosted key with the
    hosted endpoint means the hosted service's model; anything else means the local judge's, so a run
    with no key replays the committed cache (recorded with the local judge)."""
    hosted_jev = secrets.has("TYPESAFE_API_KEY") and not typesafe_endpoint
    hosted_openai = (secrets.has("OPENAI_API_KEY")
                     and openai_base_url.rstrip("/") == DEFAULTS["OPENAI_BASE_URL"])
    json_model = DEFAULT_JUDGE_MODELS[provider]
    if provider == "openai" and hosted_openai:
        json_model = HOSTED_OPENAI_MODEL
    return (HOSTED_CHOICE_MODEL if hosted_jev else LOCAL_MODEL), json_model


def models_to_discover(text, provider: str) -> tuple[str, ...]:
    """The judges whose model the run asks their endpoint's list for (`context.RunContext.settings`):
    typesafe when TYPESAFE_ENDPOINT is set and TYPESAFE_MODEL is not; openai when JSON questions go to an
    OPENAI_BASE_URL other than OpenAI's and JUDGE_MODEL is not set. `text(name)` reads a variable."""
    custom_openai = text("OPENAI_BASE_URL").rstrip("/") != DEFAULTS["OPENAI_BASE_URL"]
    wanted = {"typesafe": bool(text("TYPESAFE_ENDPOINT")), "openai": provider == "openai" and custom_openai}
    return tuple(judge for judge, asked in wanted.items() if asked and not text(MODEL_VARIABLE[judge]))


def json_providers(secrets: Secrets, openai_base_url: str, ollama_host: str) -> tuple[str, ...]:
    """The JSON providers configured, in JSON_PROVIDERS order: openai (OPENAI_API_KEY, or an OPENAI_BASE_URL
    other than OpenAI's), anthropic (ANTHROPIC_API_KEY), ollama (OLLAMA_HOST set)."""
    openai = secrets.has("OPENAI_API_KEY") or openai_base_url.rstrip("/") != DEFAULTS["OPENAI_BASE_URL"]
    configured = {"openai": openai, "anthropic": secrets.has("ANTHROPIC_API_KEY"), "ollama": bool(ollama_host)}
    return tuple(name for name in JSON_PROVIDERS if configured[name])


def parse_origins(raw: str) -> frozenset[tuple[str, int]]:
    """CITECHECK_ALLOW_HOSTS ("host:port,...") as {(host, port)}; a malformed entry names the variable."""
    origins = set()
    for entry in filter(None, (e.strip() for e in raw.split(","))):
        host, sep, port = entry.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"CITECHECK_ALLOW_HOSTS entries must be host:port, got {entry!r}")
        origins.add((host.strip("[]").lower(), int(port)))
    return frozenset(origins)


_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                      "\u2066-\u2069]")


def printable(text: str, *, lines: bool = False) -> str:
    """text with every control character (C0 but tab, DEL, C1, bidi and line separators) escaped;
    with `lines`, newlines are kept (a multi-line page or table)."""
    def escape(m: re.Match) -> str:
        ch = m.group()
        if lines and ch == "\n":
            return ch
        return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"
    return _CONTROL.sub(escape, text)


def redact(text: str) -> str:
    """Replace the value of every secret set in this process's environment with the variable's name.

    The last line of defence for messages and rows written to disk: it reads the environment at the
    moment of writing, so no secret set anywhere in the process escapes."""
    return redactor()(text)


def redactor() -> Callable[[str], str]:
    """`redact` over the environment as it is now, read once: for the many texts of one row or record."""
    return Secrets.from_env().redact


def in_ci(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process runs in CI: `CI` set true (GitHub Actions, GitLab CI and most runners set it).
    The pytest plugin then replays the cache offline."""
    return _Reader(os.environ if environ is None else environ).flag("CI")


def use_local_models() -> None:
    """Write LOCAL_MODEL_ENV into this process's environment before a bundled model is loaded."""
    os.environ.update(LOCAL_MODEL_ENV)


def child_env(overrides: Mapping[str, str] | None = None, *, quiet: bool = False) -> dict[str, str]:
    """The environment for a child process: this one's, plus QUIET_ENV when `quiet`, plus `overrides`."""
    env = dict(os.environ)
    if quiet:
        env.update(QUIET_ENV)
    env.update(overrides or {})
    return env


_unset_lock = threading.Lock()
_unset: dict = {"starting": 0, "saved": {}}


@contextlib.contextmanager
def starting_children_without(names: tuple[str, ...]):
    """This process's environment without `names` while child processes start (a child keeps the
    environment it was started with in /proc/PID/environ, whatever it sets later); restored when the last
    of nested or concurrent uses ends."""
    with _unset_lock:
        if not _unset["starting"]:
            _unset["saved"] = {name: os.environ.pop(name) for name in names if name in os.environ}
        _unset["starting"] += 1
    try:
        yield
    finally:
        with _unset_lock:
            _unset["starting"] -= 1
            if not _unset["starting"]:
                os.environ.update(_unset["saved"])
                _unset["saved"] = {}


def quiet_this_process() -> None:
    """QUIET_ENV in this process's own environment (the notebook set-up cell: the kernel itself)."""
    os.environ.update(QUIET_ENV)
