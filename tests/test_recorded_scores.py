"""Recorded MiniLM scores: a replay ranks the notebooks' passages without encoding, with what MiniLM computes."""
import json
import logging

import pytest

from citecheck import evaluation as ev
from citecheck.paths import ROOT
from citecheck.web import recorded_scores, retrieval, vectors

PAGE = ("At sea level, pure water boils at 100 degrees Celsius.",
        "Water's boiling point falls as altitude rises because air pressure drops.",
        "Parking is free for visitors after six in the evening.")
QUERY = "Water boils at 100 °C at sea level"


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A process that has computed no score and remembers no vector; `encoded` lists the texts of each
    call whose scores were computed (its vectors encoded or remembered)."""
    monkeypatch.setattr(vectors, "_memory", type(vectors._memory)())
    monkeypatch.setattr(vectors, "disk_enabled", False)
    monkeypatch.setattr(recorded_scores, "_record", None)
    monkeypatch.setattr(recorded_scores, "computed", {})
    retrieval._similarities.cache_clear()
    encoded = []
    monkeypatch.setattr(retrieval, "encode", lambda texts: encoded.append(list(texts)) or vectors.encode(texts))
    yield encoded
    retrieval._similarities.cache_clear()


def prepared_rows(monkeypatch, rows):
    monkeypatch.chdir(ROOT)
    return [ev.prepare(row) for row in rows]


def test_notebook_04s_rankings_encode_nothing_on_a_fresh_clone(fresh, monkeypatch):
    prepared = prepared_rows(monkeypatch, ev.load_sample())
    assert fresh == [] and len(prepared) == 150
    assert all(sorted(p["order"]["MiniLM"]) == list(range(len(p["passages"]))) for p in prepared)


def test_the_recorded_scores_are_what_minilm_computes(fresh, monkeypatch):
    rows = [row for n, row in enumerate(ev.load_sample()) if n % 15 == 0]          # 10 rows, every split
    replayed = [(p["claim"], p["passages"], retrieval.similarities(p["claim"], p["passages"]))
                for p in prepared_rows(monkeypatch, rows)]
    assert fresh == []
    monkeypatch.setattr(recorded_scores, "recording", True)                          # computed, not read
    retrieval._similarities.cache_clear()
    for claim, passages, scores in replayed:
        computed = retrieval.similarities(claim, passages)
        assert max(abs(a - b) for a, b in zip(scores, computed)) <= 1e-6
        assert [i for i, _ in retrieval.rank(claim, passages, k=len(passages), how="minilm")] == \
            sorted(range(len(passages)), key=lambda i: (-round(scores[i], 6), i))
    assert len(fresh) == len(rows)


def write_record(path, encoder, scores):
    path.write_text(json.dumps({"encoder": encoder, "scores": scores}))


def test_a_call_not_recorded_or_of_another_encoder_is_computed(fresh, monkeypatch, tmp_path):
    monkeypatch.setattr(recorded_scores, "PATH", tmp_path / "scores.json")
    key = recorded_scores.call_key(QUERY, PAGE)
    write_record(recorded_scores.PATH, "minilm-another-build", {key: [0.5, 0.25, 0.125]})
    computed = retrieval.similarities(QUERY, list(PAGE))
    assert len(fresh) == 1 and computed != [0.5, 0.25, 0.125]
    write_record(recorded_scores.PATH, recorded_scores.encoder(), {key: [0.5, 0.25, 0.125]})
    monkeypatch.setattr(recorded_scores, "_record", None)                            # a new process
    retrieval._similarities.cache_clear()
    assert retrieval.similarities(QUERY, list(PAGE)) == [0.5, 0.25, 0.125] and len(fresh) == 1
    assert retrieval.similarities(QUERY, list(PAGE[:2])) != [0.5, 0.25] and len(fresh) == 2   # another call


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"encoder": "x"}'])
def test_an_unreadable_record_is_said_once_and_the_scores_computed(fresh, monkeypatch, tmp_path, caplog, content):
    monkeypatch.setattr(recorded_scores, "PATH", tmp_path / "scores.json")
    recorded_scores.PATH.write_text(content)
    with caplog.at_level(logging.WARNING, logger="citecheck.web.recorded_scores"):
        retrieval.similarities(QUERY, list(PAGE))
        retrieval.similarities(QUERY, list(PAGE[1:]))
    assert len(fresh) == 2 and len(caplog.records) == 1 and "scores.json" in caplog.text
    assert str(tmp_path) not in caplog.text


def test_recording_keeps_each_computed_call_and_saves_one_sorted_line_each(fresh, monkeypatch, tmp_path):
    monkeypatch.setattr(recorded_scores, "recording", True)
    first = retrieval.similarities(QUERY, list(PAGE))
    record = tmp_path / "scores.json"
    assert recorded_scores.save(record) == 1
    recorded_scores.computed.clear()
    second = retrieval.similarities("When is parking free?", list(PAGE))
    assert recorded_scores.save(record) == 2                                          # added, nothing lost
    data = json.loads(record.read_text())
    assert data["encoder"] == recorded_scores.encoder()
    assert sorted(data["scores"].values()) == sorted([first, second])
    assert list(data["scores"]) == sorted(data["scores"]) and len(record.read_text().splitlines()) == 5 + 2
    write_record(record, "minilm-another-build", {})
    with pytest.raises(ValueError, match="minilm-another-build"):
        recorded_scores.save(record)
