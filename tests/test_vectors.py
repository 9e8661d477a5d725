"""vectors: each text encoded once, new texts in one batch, remembered in memory and on disk."""
import json
import logging
import subprocess
import sys

import numpy as np
import pytest

from citecheck.web import retrieval, vectors

PAGE = ["At sea level, pure water boils at 100 degrees Celsius.",
        "Water's boiling point falls as altitude rises because air pressure drops.",
        "Parking is free for visitors after six in the evening."]


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """Empty memories, the disk one in tmp_path; `encoded` lists each batch the model was asked for."""
    monkeypatch.setattr(vectors, "_memory", type(vectors._memory)())
    monkeypatch.setattr(vectors, "_disk", {})
    monkeypatch.setattr(vectors, "store_path", lambda: tmp_path / "vectors.sqlite")
    retrieval._similarities.cache_clear()
    encoded: list[list[str]] = []
    real = vectors.model().encode

    def counting(texts, **kwargs):
        encoded.append(list(texts))
        return real(texts, **kwargs)
    monkeypatch.setattr(vectors.model(), "encode", counting)
    yield encoded
    retrieval._similarities.cache_clear()


def test_a_page_cited_by_two_claims_is_encoded_once(fresh):
    first = retrieval.rank("Water boils at 100 °C at sea level", PAGE, how="minilm")
    second = retrieval.rank("Does altitude change the boiling point?", PAGE, how="minilm")
    assert fresh == [["Water boils at 100 °C at sea level", *PAGE], ["Does altitude change the boiling point?"]]
    assert first[0][0] == 0 and second[0][0] == 1


def test_new_texts_score_bit_for_bit_as_one_joint_batch(fresh):
    query = "Water boils at 100 °C at sea level"
    joint = vectors.model().encode([query, *PAGE], convert_to_tensor=True, normalize_embeddings=True,
                                     show_progress_bar=False).cpu().numpy()
    assert retrieval.similarities(query, PAGE) == (joint[1:] @ joint[0]).tolist()


def test_a_replay_reads_vectors_from_disk_and_encodes_nothing(fresh, monkeypatch):
    before = vectors.encode(PAGE)
    monkeypatch.setattr(vectors, "_memory", type(vectors._memory)())
    monkeypatch.setattr(vectors, "_disk", {})                 # a new process: only the file remains
    fresh.clear()
    assert np.array_equal(vectors.encode(PAGE), before) and fresh == []


def test_an_unusable_disk_memory_is_said_once_and_vectors_are_computed(fresh, tmp_path, monkeypatch, caplog):
    (tmp_path / "vectors.sqlite").write_bytes(b"not a database" * 50)
    with caplog.at_level(logging.WARNING, logger="citecheck.web.vectors"):
        first = vectors.encode(PAGE)
        vectors._memory.clear()
        second = vectors.encode(PAGE)
    assert np.array_equal(first, second) and len(fresh) == 2
    assert caplog.text.count("not remembered on disk") == 1
    assert (tmp_path / "vectors.sqlite").read_bytes() == b"not a database" * 50


def test_duplicate_texts_are_one_vector(fresh):
    out = vectors.encode([PAGE[0], PAGE[1], PAGE[0]])
    assert np.array_equal(out[0], out[2]) and fresh == [[PAGE[0], PAGE[1]]]


def test_a_replay_from_disk_imports_neither_torch_nor_the_model(fresh, tmp_path):
    before = retrieval.similarities("Water boils at 100 °C at sea level", PAGE)   # encoded, kept in tmp_path
    replay = f"""
import json, sys
from pathlib import Path
from citecheck.web import retrieval, vectors
vectors.store_path = lambda: Path({str(tmp_path / "vectors.sqlite")!r})
print(json.dumps(retrieval.similarities("Water boils at 100 °C at sea level", {PAGE!r})))
print(sorted(m for m in ("torch", "sentence_transformers") if m in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", replay], capture_output=True, text=True, check=True)
    scores, imported = done.stdout.splitlines()
    assert imported == "[]" and json.loads(scores) == before      # the stored vectors, the same products
