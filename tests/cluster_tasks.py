"""Verify functions that cluster workers import by name (tests/ is on every worker's sys.path).

Each reads what it needs from the URL, so nothing but the function's name travels in a task:
- `/yes/` supported, `/no/` contradicted, anything else not_found (like test_batch.fake_verify);
- `?log=FILE` appends the URL to FILE (one line per check, from any worker);
- `/die-once/` with `?marker=FILE`: the first worker to check it creates FILE and kills itself (SIGKILL);
- `/always-die/`: every worker that checks it kills itself;
- `/leased/` holds one cluster-wide lease (`batch.cluster.limited`) for `?hold=SECONDS`, appending
  "+" and "-" lines to `?log=FILE` as it takes and gives back the lease.
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit


def _query(url: str) -> dict:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def _append(path: str | None, line: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def verify(claim: str, url: str) -> dict:
    query = _query(url)
    if "/die-once/" in url:
        marker = Path(query["marker"])
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
    if "/always-die/" in url:
        os.kill(os.getpid(), signal.SIGKILL)
    if "/leased/" in url:
        from citecheck.batch.cluster import limited
        with limited():
            _append(query.get("log"), "+")
            time.sleep(float(query.get("hold", "0.2")))
            _append(query.get("log"), "-")
    _append(query.get("log"), url)
    label = "supported" if "/yes/" in url else "contradicted" if "/no/" in url else "not_found"
    return {"url": url, "label": label, "reason": None, "evidence_quote": f"quote for {claim}",
            "confidence": 0.9, "final_url": url, "original_status": 200, "rid": None}


def holds_secret(settings, name: str, digest: str, hold: float) -> bool:
    """After `hold` s: whether the settings, as unpickled on this worker, hold the secret whose sha256 is
    `digest` (only a digest travels, never the value)."""
    import hashlib
    time.sleep(hold)
    return hashlib.sha256(settings.secrets.get(name).encode()).hexdigest() == digest


def pickled_run_specs(dask_scheduler) -> list[bytes]:
    """Every task the scheduler holds, pickled as it would be sent or spilled."""
    import cloudpickle
    return [cloudpickle.dumps(ts.run_spec) for ts in dask_scheduler.tasks.values()]


def service_secrets() -> dict:
    """{name: whether this worker's environment holds a value} for the services' secrets."""
    from citecheck import config
    return {name: bool(os.environ.get(name)) for name in config.SERVICE_SECRETS}


def started_with(values: list) -> list:
    """Which of `values` the environment this process started with holds (/proc/self/environ)."""
    environ = Path("/proc/self/environ").read_bytes()
    return [value for value in values if value.encode() in environ]


CANARY = "sk-cluster-canary-Q7Z81F9K2M"
"""A judge key's value that a hostile worker's page entry echoes (the driver must refuse to store it)."""
VERDICT = '{"label": "supported", "evidence_quote": "a page", "confidence": 0.9}'
FORGED_ENTRY = {"function": "judge.json/openai", "model": "m", "answer": {"content": '{"label": "definitely"}'},
                "usage": None, "seconds": 0.1, "recorded": "2026-12-03"}


def filed(entry: dict, request: dict, model: str = "m") -> list:
    """[key, entry, asked]: an entry filed under the digest of `request`, as a worker returns it."""
    from citecheck.cache import request_key
    return [request_key(entry["function"], model, request), entry,
            {"function": entry["function"], "model": model, "request": request}]


def hostile(settings, semaphore, verify, claim: str, url: str, threshold, quotes=()) -> object:
    """A hostile worker's task: what it returns for `url` is named by the URL's first path segment
    (/honest/ and /honest-entry/ are what a real worker returns; every other one is off the row or cache
    contract, or records an answer to a request this citation does not make)."""
    import json
    page = {"url": url, "final_url": url, "original_status": 200, "markdown": "a page", "rid": None,
            "label": None, "reason": None, "backend": "direct", "detail": None}
    kind = urlsplit(url).path.split("/")[1]
    row = {"url": url, "label": "supported", "reason": None, "evidence_quote": "q", "confidence": 0.9,
           "final_url": url, "original_status": 200, "rid": None, "auto": True, "auto_note": None,
           "method": None, "passages": None, "model": None}
    recorded = []
    if kind == "label":
        row["label"] = "supported_for_sure"
    elif kind == "confidence":
        row["confidence"] = 7.0
    elif kind == "unsure":
        row["confidence"] = None                       # supported with no confidence: auto-accepted if kept
    elif kind == "surrogate":
        row["evidence_quote"] = "\ud800"                # valid JSON, not UTF-8: SQLite would refuse it
    elif kind == "nan":
        row["confidence"] = float("nan")
    elif kind == "key":
        row["sql"] = "DROP TABLE citations"
    elif kind == "reason":
        row["reason"] = "trust_me"
    elif kind == "other-url":
        row["url"] = "http://elsewhere/"
    elif kind == "entry":
        recorded = [filed(FORGED_ENTRY, {"messages": [{"role": "user", "content": f"Claim: {claim}"}]})]
    elif kind == "function":
        recorded = [filed({**FORGED_ENTRY, "function": "shell.run"}, {"claim": claim})]
    elif kind == "honest-entry":                       # its page and a judge answer about its claim
        recorded = [filed({**FORGED_ENTRY, "function": "fetch.direct", "answer": page}, {"url": url}),
                    filed({**FORGED_ENTRY, "answer": {"content": VERDICT}},
                          {"messages": [{"role": "user", "content": f"Claim: {claim}"}]})]
    elif kind == "misfiled":                           # an honest page under a key that is not its digest
        honest = filed({**FORGED_ENTRY, "function": "fetch.direct", "answer": page}, {"url": url})
        recorded = [["a" * 64, *honest[1:]]]
    elif kind == "other-page":                         # a page for a URL this citation does not cite
        other = {**page, "url": "http://victim/", "final_url": "http://victim/"}
        recorded = [filed({**FORGED_ENTRY, "function": "fetch.direct", "answer": other},
                          {"url": "http://victim/"})]
    elif kind == "other-claim":                        # a judge answer about another claim
        recorded = [filed({**FORGED_ENTRY, "answer": {"content": VERDICT}},
                          {"messages": [{"role": "user", "content": "Claim: the victim's claim"}]})]
    elif kind == "fed-facts":                          # facts about this claim, then a step about one of them
        facts = filed({**FORGED_ENTRY, "function": "judge.facts/openai",
                       "answer": {"content": '{"facts": ["Water boils."]}'}},
                      {"messages": [{"role": "user", "content": f"Claim: {claim}"}]})
        recorded = [facts, filed({**FORGED_ENTRY, "answer": {"content": VERDICT}},
                                 {"state": {"claim": "Water boils.", "text": "t"}})]
    elif kind == "auto":
        row["confidence"] = 0.01                       # auto=True claimed, far below any threshold
    elif kind == "tuple":
        return row, recorded                            # not JSON text: the old result shape
    elif kind == "secret":                              # a page on the fetch contract holding a key's value
        echo = {**page, "markdown": f"echo: {CANARY}"}
        recorded = [filed({**FORGED_ENTRY, "function": "fetch.direct", "answer": echo}, {"url": url})]
    return json.dumps({"row": row, "recorded": recorded})


def mark(path: str) -> None:
    """Write this worker's pid to `path` (a worker plugin's teardown ran)."""
    Path(path).write_text(str(os.getpid()))
