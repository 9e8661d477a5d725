"""Shared notebook plumbing: the set-up cell, showing package code, running the CLI, executing notebooks.

Rules:
- The set-up cell (`ctx = setup()`) never changes directory: a reader's own files resolve against the
  working directory (the notebook's folder in Jupyter, and in `execute()`), the cookbook's own are named
  explicitly (`DATA / "rfc7519.txt"`), and the cache's and journal's default files (json_cache.json,
  audit.db) are the repository's whatever the working directory (`notebook_settings`). `setup()` builds
  the notebook's run context from the kernel's environment, once.
- Replays read the cookbook's committed json_cache.json; a notebook's NEW live calls are recorded into a
  store of the reader's own, build/my_calls.sqlite (git-ignored, `MY_CALLS`), never into the cookbook's
  json_cache.sqlite that `cache export` merges into the committed file, unless CITECHECK_CACHE_STORE
  names a store (`record` names the cookbook's). Lookups read that store first, so a reader's own
  recorded calls replay too.
- `cli(ctx, ...)` runs `python -m citecheck` from the working directory with the notebook's cache (the
  same export and store, `cache_env`); a cookbook file is passed as written from there (`../data/...`).
- Output is reproducible: no absolute paths, no progress bars, floats rounded by pandas options,
  figures at a fixed size and dpi with no timestamps in their metadata. The one exception is a cell
  tagged `measured` (timings): compared with its numbers masked, so its words and shape must match.
- `execute()` runs a notebook with nbclient in a fresh kernel, in the notebook's folder (as Jupyter
  does), whose environment is this process's, quietened, plus what the caller passes; offline unless
  told otherwise, and then from the export alone (CITECHECK_CACHE_STORE=off): what is committed is all a
  reproduction reads. This process's own environment is never changed. The kernel talks over Unix
  sockets in a private temporary folder (IPC transport), not TCP: nothing listens on a port and the
  kernel has no unencrypted-TCP warning.
- A replay computes nothing a committed file already holds, so a fresh clone replays about as fast as
  a machine that replayed before. Each replay's wall seconds are kept: `execute_all(save=True)` writes
  them to notebooks/replay_seconds.json (committed, beside the outputs they produced), `main()` to
  build/notebooks/replay_seconds.json; `main()` says before each notebook how long it took last time
  (this machine's last run, else the committed file), so `setup.sh` is never silent for minutes.
- What a reader sees: a figure is one <img> with its alt text (`plots.alt_text`); a printed table
  shows a missing value as "—", never NaN (`tidy`); the set-up cell says who answers (`judge_line`:
  offline the model that recorded the cached answers, and when; with a judge configured and
  CITECHECK_OFFLINE unset, that judge, asked by every judge call); `show(fn, start=, stop=)` prints a
  function's core lines, not its plumbing; a long printed line wraps at word boundaries (`wrapped`).
- The driver (`execute`, `main`) imports only what it runs: nbformat imports jsonschema, whose format
  checker imports optional validators (one builds an IRI grammar at import, about 1 s of CPU) for checks
  nbformat never makes (it validates with fastjsonschema, no format checks); `jupyter_modules` imports
  nbformat and nbclient with those blocked for that import alone, so they stay importable later.
- A notebook of hundreds of judge calls (04, 05) replays the recordings unless the reader opts in with
  CITECHECK_NOTEBOOK_LIVE=1 (`replay_unless_opted_in`), and prints what opting in costs (`live_cost`).
"""
from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from . import config
from .cache import OFF, store_path
from .context import RunContext
from .paths import DATA, ROOT

NOTEBOOKS = ROOT / "notebooks"
MY_CALLS = ROOT / "build" / "my_calls.sqlite"
"""The reader's own store: a notebook's new live calls are recorded here unless CITECHECK_CACHE_STORE says."""


def notebook_settings(environ=None) -> config.Settings:
    """The environment's settings, with the default files in the repository (`Settings.from_env`'s
    `defaults_in`) and new live calls recorded into MY_CALLS unless CITECHECK_CACHE_STORE names a store."""
    settings = config.Settings.from_env(environ, defaults_in=ROOT)
    return settings if settings.cache_store else settings.replace(cache_store=str(MY_CALLS))


def setup() -> RunContext:
    """Quiet progress bars, fix pandas and matplotlib output; return the notebook's run context
    (`notebook_settings`). The working directory is left as it is."""
    config.quiet_this_process()
    import warnings
    # tqdm.auto warns (with an absolute path) when ipywidgets is absent; bars are disabled anyway
    warnings.filterwarnings("ignore", message="IProgress not found")
    import matplotlib
    import pandas as pd
    matplotlib.rcParams.update({"figure.dpi": 100, "savefig.dpi": 100, "figure.figsize": (7.5, 3.6),
                                "font.size": 9, "svg.hashsalt": "citecheck"})
    pd.set_option("display.precision", 3)
    pd.set_option("display.width", 140)
    pd.set_option("display.max_colwidth", None)              # a table never cuts a quote or a claim
    pd.set_option("display.max_rows", 80)
    ctx = RunContext.build(notebook_settings())
    try:
        ip = get_ipython()  # type: ignore[name-defined]  # noqa: F821
    except NameError:
        return ctx
    ip.run_line_magic("matplotlib", "inline")
    ip.run_line_magic("config", "InlineBackend.print_figure_kwargs = {'metadata': {'Software': None}}")
    show_figures_with_alt_text(ip)
    return ctx


def cache_env(settings: config.Settings) -> dict[str, str]:
    """The variables that point a child process (the CLI, a notebook's kernel) at these settings' cache:
    the export and its store as absolute paths ('off' stays off)."""
    store = store_path(settings.cache_path, settings.cache_store)
    return {"CITECHECK_CACHE": str(Path(settings.cache_path).resolve()),
            "CITECHECK_CACHE_STORE": str(store.resolve()) if store is not None else OFF}


def cli(ctx: RunContext, *args, echo: bool = True, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess | None:
    """Run `python -m citecheck ARGS` from the working directory with the notebook's cache (`cache_env`)
    and `env`'s variables. With `echo`, print its stdout, then its stderr (`wrapped`), and return None (a
    cell shows nothing twice); else return the finished process to read. A path inside the repository is
    passed relative to the working directory, as a reader would type it there."""
    def arg(value) -> str:
        path = Path(value) if isinstance(value, Path) else None
        return os.path.relpath(path) if path is not None and path.is_relative_to(ROOT) else str(value)
    command = [sys.executable, "-m", "citecheck", *map(arg, args)]
    done = subprocess.run(command, capture_output=True, text=True,
                          env=config.child_env({**(env or {}), **cache_env(ctx.settings)}))
    if not echo:
        return done
    print(wrapped(done.stdout + done.stderr), end="")
    return None


WIDTH = 110
"""Printed lines longer than this are wrapped at word boundaries (`wrapped`)."""


def wrapped(text: str, width: int = WIDTH) -> str:
    """`text` with each line longer than `width` wrapped at spaces, continued with an indent of four: a
    narrow reader never sees a word cut in two (a word longer than the line stays whole)."""
    import textwrap
    return "".join(textwrap.fill(line, width, subsequent_indent="    ", break_long_words=False,
                                 break_on_hyphens=False) + end if len(line) > width else line + end
                   for line, end in _line_ends(text))


def _line_ends(text: str):
    """(line, its line end) for each line of `text`, the last without one when `text` does not end so."""
    for line in text.splitlines(keepends=True):
        stripped = line.rstrip("\r\n")
        yield stripped, line[len(stripped):]


def show_figures_with_alt_text(ip) -> None:
    """A figure shows as one <img> carrying its alt text (`plots.alt_text`), and as that text where
    no image can be shown (the PNG is inside the <img>, so it is stored once)."""
    from html import escape

    from matplotlib.figure import Figure

    from .report.plots import alt_text, data_uri
    formatters = ip.display_formatter.formatters
    formatters["image/png"].pop(Figure, None)
    formatters["text/html"].for_type(Figure, lambda fig: f'<img src="{data_uri(fig)}" alt="{escape(alt_text(fig))}">')
    formatters["text/plain"].for_type(Figure, lambda fig, p, cycle: p.text(alt_text(fig)))


def judge_functions(settings: config.Settings, *steps: str) -> list[str]:
    """The cache functions these settings' judge steps are stored under: "choice" where `choice_via` sends
    a Choice question, any other step ("json", "facts", "question", "answer") as 'judge.<step>/<provider>'."""
    from .judge import choice_json
    via = settings.choice_via
    choice = "typesafe.system_one" if via == "typesafe" else choice_json.function(via)
    return [choice if step == "choice" else f"judge.{step}/{settings.judge_provider}" for step in steps]


def asks_live(settings: config.Settings) -> bool:
    """A judge is configured (a Choice endpoint or a JSON provider) and CITECHECK_OFFLINE is unset."""
    return not settings.offline and bool(settings.choice_configured or settings.json_providers)


JUDGE_SETTINGS = ("typesafe_endpoint", "typesafe_model", "openai_base_url", "anthropic_base_url",
                  "ollama_host", "judge_provider", "judge_model", "secrets")
"""The settings that say which judge answers (`recordings` resets them)."""


def recordings(ctx: RunContext) -> RunContext:
    """`ctx` as the cookbook recorded it: no judge configured and offline, so every judge call replays
    json_cache.json (a miss fails naming the call)."""
    bare = config.Settings.from_env({}, defaults_in=ctx.settings.defaults_in)
    return ctx.replace(offline=True, **{name: getattr(bare, name) for name in JUDGE_SETTINGS})


def replay_unless_opted_in(ctx: RunContext) -> RunContext:
    """For a notebook of hundreds of judge calls: `ctx` when the reader opted in (CITECHECK_NOTEBOOK_LIVE=1)
    or no judge would be asked anyway; else `recordings(ctx)`, saying so in one line."""
    if ctx.settings.notebook_live or not asks_live(ctx.settings):
        return ctx
    print("replaying the recordings, not your judge: this notebook asks hundreds of judge questions; "
          "CITECHECK_NOTEBOOK_LIVE=1 asks your judge (the cost is printed below)")
    return recordings(ctx)


def live_cost(records: list[dict]) -> str:
    """'N judge calls, P prompt and O output tokens' summed over records ({calls, prompt_tokens,
    output_tokens}, as the cache's entries counted them)."""
    total = {k: sum(r.get(k) or 0 for r in records) for k in ("calls", "prompt_tokens", "output_tokens")}
    calls, prompt, output = total["calls"], total["prompt_tokens"], total["output_tokens"]
    return f"{calls:,} judge calls, {prompt:,} prompt and {output:,} output tokens"


def judge_line(ctx: RunContext, *steps: str) -> None:
    """Say who answers this run's judge calls of `steps` (default "choice"). Live (`asks_live`): the
    configured provider and model per kind of question, one line each. Otherwise the model that recorded
    the cached answers, and when (`who_answered`)."""
    settings = ctx.settings
    steps = steps or ("choice",)
    if not asks_live(settings):
        who_answered(ctx, *judge_functions(settings, *steps))
        return
    where = {"typesafe": settings.typesafe_endpoint or "hosted Jev", "openai": settings.openai_base_url,
             "anthropic": settings.anthropic_base_url, "ollama": settings.ollama_host}
    for function in judge_functions(settings, *steps):
        provider = "typesafe" if function == "typesafe.system_one" else settings.judge_provider
        model = settings.typesafe_model if provider == "typesafe" else settings.judge_model
        print(f"{function}: answers by {model} at {where[provider]} ({provider}), asked live; "
              "an answer already cached for that model replays")


def who_answered(ctx: RunContext, *functions: str) -> None:
    """Print which model recorded the cached answers of each function, and when (one line each). No count:
    the cache holds every notebook's answers, so a count would change whenever any of them records."""
    from .cache import models_used
    for row in models_used(ctx.cache):
        if row["function"] in functions:
            when = row["first"] if row["first"] == row["last"] else f"{row['first']} to {row['last']}"
            print(f"{row['function']}: answers by {row['model']}, recorded {when} (UTC)")


def rests_on(verdict: dict) -> str:
    """What a `pooled` verdict's label rests on, in words: a sentence it supports, the judge's own no, the
    coverage tie-break (no answer decided, the claim's words on the page), or nothing (`not_found`)."""
    from .judge.methods import pooled
    s = pooled.Pooled.of(verdict["signals"])
    decided = ("some answer decided" if s.decided
               else f"no answer decided (no option reached {pooled.DECIDED})")
    if verdict["label"] == "supported":
        return f"a supporting sentence (P(supported) {s.p_supported:.2f} >= SUPPORT_AT {pooled.SUPPORT_AT})"
    if verdict["label"] == "contradicted" and pooled.contradicted_by_judge(s):
        return f"the judge's own no (P(no) {s.no:.2f}, above unknown and yes)"
    if verdict["label"] == "contradicted":
        return f"the coverage tie-break: {decided}, coverage {verdict['coverage']:.2f} >= {pooled.COVERAGE}"
    return f"nothing: no sentence supports it and the judge said no to none; {decided}"


def tidy(frame, digits: int = 3):
    """A DataFrame for display: floats rounded to `digits`, a missing value shown as "—" (no NaN)."""
    import pandas as pd
    frame = pd.DataFrame(frame).round(digits)
    return frame.astype(object).where(frame.notna(), "—")


def show(*objects, start: str | None = None, stop: str | None = None) -> None:
    """Print the package's own source of each function or class (the notebook never redefines it).

    With `start` (and `stop`), print only the core: the signature and docstring, then the lines from
    the first one holding `start` through the first one after it holding `stop`, the rest as `...`."""
    for obj in objects:
        source = inspect.getsource(obj).rstrip()
        print((source if start is None else core_lines(source, start, stop)) + "\n")


def core_lines(source: str, start: str, stop: str | None) -> str:
    """`source` cut to its head (through the docstring) and the lines from `start` through `stop`."""
    lines = source.splitlines()
    head = next(i for i, line in enumerate(lines) if i and line.rstrip().endswith('"""'))
    first = next((i for i, line in enumerate(lines) if start in line and i > head), None)
    if first is None:
        raise ValueError(f"no line after the docstring holds {start!r}")
    last = first if stop is None else next((i for i, line in enumerate(lines) if stop in line and i >= first), None)
    if last is None:
        raise ValueError(f"no line from {start!r} on holds {stop!r}")
    indent = lines[first][:len(lines[first]) - len(lines[first].lstrip())]
    elided = [f"{indent}..."] if first > head + 1 else []
    tail = [f"{indent}..."] if last < len(lines) - 1 else []
    return "\n".join(lines[:head + 1] + elided + lines[first:last + 1] + tail)


FORMAT_CHECKER_EXTRAS = ("rfc3987_syntax", "rfc3987", "rfc3986_validator", "rfc3339_validator", "isoduration",
                         "fqdn", "idna", "webcolors", "jsonpointer", "uri_template")
"""The optional modules jsonschema's format checker imports when jsonschema is imported; nbformat runs no
format check, so the driver does not import them (`jupyter_modules`)."""


def jupyter_modules():
    """(nbformat, nbclient), imported with FORMAT_CHECKER_EXTRAS blocked during that import alone (those not
    imported already); an import of them afterwards works as usual."""
    blocked = [name for name in FORMAT_CHECKER_EXTRAS if name not in sys.modules]
    sys.modules.update(dict.fromkeys(blocked))
    try:
        import nbclient
        import nbformat
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return nbformat, nbclient


def execute(path: str | Path, *, offline: bool = True, timeout: int = 1800, env: dict | None = None):
    """Execute one notebook in a fresh kernel in the notebook's folder and return it."""
    nbformat, nbclient = jupyter_modules()
    nb = nbformat.read(str(path), as_version=4)
    replay = {"CITECHECK_OFFLINE": "1", "CITECHECK_CACHE_STORE": "off"} if offline else {"CITECHECK_OFFLINE": "0"}
    kernel_env = config.child_env({**(env or {}), **replay}, quiet=True)
    with tempfile.TemporaryDirectory(prefix="citecheck-kernel-") as sockets:
        client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                         config=kernel_transport(sockets),
                                         resources={"metadata": {"path": str(Path(path).resolve().parent)}})
        client.execute(env=kernel_env)
    return join_streams(nb)


def join_streams(nb):
    """`nb` with each code cell's consecutive chunks of one stream joined into one output, so a saved
    notebook does not keep the kernel's timing-dependent splits of printed text."""
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        joined = []
        for out in cell.outputs:
            last = joined[-1] if joined else None
            if (out.get("output_type") == "stream" and last is not None and last.get("output_type") == "stream"
                    and last.get("name") == out.get("name")):
                last["text"] += out["text"]
            else:
                joined.append(out)
        cell.outputs = joined
    return nb


def kernel_transport(sockets: str):
    """Kernel-manager config: IPC sockets under `sockets` (an absolute path, so the kernel, which runs
    in the notebook's folder, and this process find the same files); TCP where Unix sockets do not exist."""
    from traitlets.config import Config
    if os.name != "posix":
        return Config()
    return Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "kernel")}})


MEASURED = "measured"
"""The tag of a cell that prints timings: its numbers may differ run to run, its words may not."""
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _outputs(cell) -> list[dict]:
    """A code cell's outputs without execution counts or metadata; consecutive chunks of one stream
    are joined (how a kernel splits printed text is timing, not content). In a cell tagged
    `measured` every number in printed text reads '#'."""
    kept = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            # a kernel may flush one cell's printing in several chunks: compare the joined text
            if kept and kept[-1].get("stream") == out["name"]:
                kept[-1]["text"] += out["text"]
            else:
                kept.append({"stream": out["name"], "text": out["text"]})
        elif out["output_type"] in ("display_data", "execute_result"):
            kept.append({"data": dict(out["data"])})
        else:
            kept.append({"error": out.get("ename"), "value": out.get("evalue")})
    if MEASURED in cell.get("metadata", {}).get("tags", []):
        for out in kept:
            if "text" in out:
                out["text"] = _NUMBER.sub("#", out["text"])
    return kept


def _lines(outputs: list[dict]) -> list[str]:
    """Compared outputs (`_outputs`) as lines: printed text line by line, each display as its MIME type
    and its text's lines, an error as its name and value."""
    lines = []
    for out in outputs:
        if "text" in out:
            lines += [f"{out['stream']}: {line}" for line in out["text"].splitlines()]
        elif "data" in out:
            for kind, value in sorted(out["data"].items()):
                text = value if isinstance(value, str) else "".join(map(str, value)) if isinstance(
                    value, list) else repr(value)
                lines += [f"{kind}: {line}" for line in text.splitlines()] or [f"{kind}: (empty)"]
        else:
            lines.append(f"error: {out['error']}: {out['value']}")
    return lines


def first_difference(executed: list[dict], committed: list[dict], width: int = 100) -> str:
    """'line K: committed ... / now ...': the first line where two cells' compared outputs differ, each side
    cut to `width` characters and printable."""
    new, old = _lines(executed), _lines(committed)
    at = next((i for i, (a, b) in enumerate(zip(new, old)) if a != b), min(len(new), len(old)))

    def side(lines: list[str]) -> str:
        line = lines[at] if at < len(lines) else "(no more output)"
        return config.printable(line if len(line) <= width else line[:width - 1] + "…")
    return f"line {at + 1}: committed {side(old)} / now {side(new)}"


def differences(executed, committed) -> list[str]:
    """Code cells whose outputs (text and images) differ, as 'code cell N: outputs differ (kinds); first
    at line K: committed ... / now ...' (`first_difference`)."""
    new = [c for c in executed.cells if c.cell_type == "code"]
    old = [c for c in committed.cells if c.cell_type == "code"]
    if len(new) != len(old):
        return [f"{len(new)} code cells executed, {len(old)} committed"]
    found = []
    for n, (a, b) in enumerate(zip(new, old), 1):
        if (now := _outputs(a)) != (was := _outputs(b)):
            kinds = sorted({k for o in now + was for k in o.get("data", {"text": 0})})
            found.append(f"code cell {n}: outputs differ ({', '.join(kinds)}); first at "
                         f"{first_difference(now, was)}")
    return found


def notebook_paths() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


SECONDS = "replay_seconds.json"
"""{notebook file name: wall seconds of its last replay}: in notebooks/ (committed) and build/notebooks/."""


def replay_seconds(folder: Path) -> dict[str, float]:
    """The seconds recorded in `folder`; {} when there are none or the file is unreadable (only a hint)."""
    import json
    try:
        seconds = json.loads((folder / SECONDS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return seconds if isinstance(seconds, dict) else {}


def keep_seconds(folder: Path, seconds: dict[str, float]) -> None:
    """Record these replays' seconds in `folder`, keeping the other notebooks' (whole seconds: small diffs)."""
    import json

    from .files import replace_file
    merged = {**replay_seconds(folder), **{name: round(s) for name, s in seconds.items()}}
    text = json.dumps(dict(sorted(merged.items())), indent=1) + "\n"
    replace_file(folder / SECONDS, lambda handle: handle.write(text))


def timed_execute(path: Path, **kwargs):
    """`execute(path, **kwargs)` and its wall seconds."""
    import time
    started = time.perf_counter()
    nb = execute(path, **kwargs)
    return nb, time.perf_counter() - started


def execute_all(*, offline: bool = True, save: bool = True, env: dict | None = None) -> list[Path]:
    """Execute every notebook in order; save each with its outputs (and, offline, its replay seconds) when `save`."""
    nbformat, _ = jupyter_modules()
    done, seconds = [], {}
    for path in notebook_paths():
        nb, seconds[path.name] = timed_execute(path, offline=offline, env=env)
        if save:
            nbformat.write(nb, str(path))
        done.append(path)
    if save and offline:
        keep_seconds(NOTEBOOKS, seconds)
    return done


PROBLEMS = "problems.txt"
"""In build/notebooks/: one line per notebook that failed or differs (`main`), empty when all reproduce;
setup.sh prints it last."""


def arguments(argv) -> None:
    """`python -m citecheck.notebook --help` says what the command does; it takes no other argument."""
    import argparse
    parser = argparse.ArgumentParser(
        prog="python -m citecheck.notebook",
        description="Re-execute every notebook offline from json_cache.json into build/notebooks/ and say "
                    "whether each reproduces its committed outputs (the first differing cell and line when "
                    "not). Exit 1 when any differs or fails.")
    parser.parse_args(list(argv))


def main(argv=()) -> int:
    """Re-execute every notebook offline into build/notebooks/ and say whether each reproduces; before
    each, how long it took last time. What failed or differs is also written to PROBLEMS."""
    nbformat, _ = jupyter_modules()
    arguments(argv)
    out_dir = ROOT / "build" / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    last = {**replay_seconds(NOTEBOOKS), **replay_seconds(out_dir)}
    problems, seconds = [], {}
    for path in notebook_paths():
        hint = f" (last time {last[path.name]:.0f} s)" if isinstance(last.get(path.name), (int, float)) else ""
        print(f"{path.name}: replaying{hint}...", flush=True)
        try:
            nb, seconds[path.name] = timed_execute(path)
        except Exception as exc:  # a failing cell: say which notebook and why, keep going
            problems.append(f"{path.name}: FAILED: {str(exc).strip().splitlines()[-1]}")
            print(problems[-1], flush=True)
            continue
        nbformat.write(nb, str(out_dir / path.name))
        diffs = differences(nb, nbformat.read(str(path), as_version=4))
        verdict = "identical to the committed outputs" if not diffs else "DIFFERS: " + "; ".join(diffs)
        print(f"{path.name}: {seconds[path.name]:5.1f} s, {verdict}", flush=True)
        problems += [f"{path.name}: DIFFERS: {diffs[0]}"] if diffs else []
    keep_seconds(out_dir, seconds)
    (out_dir / PROBLEMS).write_text("".join(f"{line}\n" for line in problems), encoding="utf-8")
    print(f"executed notebooks are in {out_dir.relative_to(ROOT)}/")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
