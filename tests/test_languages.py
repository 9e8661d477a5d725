"""French, German and Russian end to end, and nothing else read as if it were one of them: the
detector (`source.language`), stemmed BM25 with English unchanged, pysbd and judge units per language,
the uncited cues, judge prompts that state a non-English language (English prompts and cache keys
unchanged), and a claim in any other language `unsupported_language` with no model asked, in verify,
check, check-answer and MCP."""
from __future__ import annotations

import asyncio
import hashlib
import json
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from citecheck import check, extract, verify
from citecheck.answer.uncited import asserts_fact
from citecheck.extract import sentences as answer_sentences
from citecheck.judge import judges
from citecheck.judge.methods import sentences as units
from citecheck.paths import ROOT
from citecheck.source import language
from citecheck.source.document import Document, Section
from citecheck.vocabulary import NOT_FOUND, REASONS, UNSUPPORTED_LANGUAGE, VERDICTS
from citecheck.web import retrieval

DATA = ROOT / "data"
UNREAD = ["El agua hierve a 100 °C al nivel del mar.", "Il sole è caldo e la luna è fredda.",
          "A água ferve a 100 °C ao nível do mar, não em altitude.", "水は海面で100 °Cで沸騰する。",
          "الماء يغلي عند 100 درجة مئوية.", "Вода кипить при 100 °C на рівні моря.",
          "Water boils at 100 °C: 水は海面で沸騰する。"]


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


# ---------------------------------------------------------------- detection

@pytest.mark.parametrize("text, code", [
    ("Water boils at 100 °C at sea level.", "en"), ("L'eau bout à 100 °C au niveau de la mer.", "fr"),
    ("Wasser siedet auf Meereshöhe bei 100 °C.", "de"), ("Вода кипит при 100 °C на уровне моря.", "ru"),
    ("100 °C", "en"), ("words per passage", "en"), ("", "en")])
def test_the_four_languages_are_told_apart(text, code):
    assert language.detect(text) == code
    assert not language.unsupported(text)


@pytest.mark.parametrize("text", UNREAD)
def test_any_other_language_or_script_is_unsupported_mixed_text_too(text):
    assert language.unsupported(text), language.detect(text)


def test_every_english_claim_the_cookbook_ships_reads_as_english():
    texts = [r[k] for name in ("wice/sample.jsonl", "rfc_pairs.jsonl", "claims.jsonl", "claims_more.jsonl",
                               "uncited/tune.jsonl", "uncited/report.jsonl")
             for r in jsonl(DATA / name) for k in ("claim", "text") if isinstance(r.get(k), str)]
    assert len(texts) > 350
    assert [t for t in texts if language.detect(t) != "en"] == []


def test_a_source_is_refused_by_its_script_only():
    sports = next(r for r in jsonl(DATA / "wice/sample.jsonl") if r["id"] == "dev02203")
    assert not language.unreadable("\n".join(sports["evidence"]))      # more Portuguese words than English
    assert language.unreadable("水は海面で100 °Cで沸騰する。" * 5)
    assert not language.unreadable("Вода кипит при 100 °C.")


# ---------------------------------------------------------------- retrieval, sentences, units

def test_english_bm25_tokens_and_scores_are_unchanged():
    for row in jsonl(DATA / "wice/sample.jsonl")[:40]:
        passages = row["evidence"][:30]
        old = [re.findall(r"\w+", p.lower()) or [""] for p in passages]
        from rank_bm25 import BM25Okapi
        before = [float(s) for s in BM25Okapi(old).get_scores(re.findall(r"\w+", row["claim"].lower()))]
        assert retrieval.bm25_scores(row["claim"], passages) == before


def test_a_french_claim_finds_the_inflected_passage():
    passages = ["Le sel change peu de choses à la cuisson des pâtes.",
                "Au niveau de la mer, l'eau pure bout à 100 °C."]
    claim = "L'ébullition de l'eau pure au niveau de la mer"
    assert retrieval.rank(claim, passages, 1, how="bm25")[0][0] == 1
    assert retrieval.tokens("Вода кипит; температура кипения", "ru") == ["вод", "кип", "температур", "кипен"]


def test_stemming_in_threads_garbles_no_word():
    """A snowball stemmer keeps its word in itself: one shared by threads garbled words (IndexError)."""
    text = "Dans une ville située à environ 1 600 mètres, l'eau bout vers 95 °C. " * 40
    want = retrieval.tokens(text, "fr")
    with ThreadPoolExecutor(8) as pool:
        assert all(got == want for got in pool.map(lambda _: retrieval.tokens(text, "fr"), range(200)))


def test_answer_sentences_use_the_languages_pysbd_rules():
    text = "Bonne question ! Au niveau de la mer, l'eau pure bout à 100 °C. Elle bout vers 95 °C en altitude."
    found = answer_sentences.Sentences(text, "fr")
    assert [text[a:b] for a, b in found.spans][0] == "Bonne question !"
    assert len(found.spans) == 3


def test_judge_units_split_before_any_capital_outside_english_only():
    ru = "Давление падает. В городе вода кипит при 95 °C. На вершинах она кипит при 70 °C."
    assert len(units.split_sentences(ru)) == 3
    assert units.split_sentences("It boils. Élodie said so.") == ["It boils. Élodie said so."]


# ---------------------------------------------------------------- the uncited rule

@pytest.mark.parametrize("lang", ["fr", "de", "ru"])
def test_each_language_has_a_labelled_sample_split_by_hash(lang):
    rows = {half: jsonl(DATA / "uncited" / f"{lang}_{half}.jsonl") for half in ("tune", "report")}
    assert sum(map(len, rows.values())) >= 40
    for half, parity in (("tune", 0), ("report", 1)):
        assert all(hashlib.sha256(r["text"].encode()).digest()[-1] % 2 == parity for r in rows[half])
        assert {r["label"] for r in rows[half]} == {"claim", "no_claim"}


def test_the_french_answer_s_uncited_fact_is_flagged_and_its_small_talk_is_not():
    assert asserts_fact("Une cocotte-minute cuit plus vite parce que l'eau y bout vers 120 °C.")
    assert not asserts_fact("N'hésitez pas à me poser d'autres questions.")
    assert not asserts_fact("Verwenden Sie ein Thermometer für die Messung.")
    assert asserts_fact("Der Luftdruck nimmt mit der Höhe ab.")
    assert not asserts_fact("Используйте термометр для проверки воды.")
    assert asserts_fact("Высота Эльбруса составляет 5642 метра.")
    assert asserts_fact("El agua hierve a 100 °C al nivel del mar.")     # unreadable: not waved through


def test_the_english_rule_is_unchanged_on_its_sample():
    for half, said in (("tune", 69), ("report", 65)):
        assert sum(asserts_fact(r["text"]) for r in jsonl(DATA / "uncited" / f"{half}.jsonl")) == said


# ---------------------------------------------------------------- judge prompts

def test_english_prompts_are_unchanged_and_other_languages_are_stated():
    assert judges.choice_state("Water boils.", "Water boils at 100 °C.") == {
        "claim": "Water boils.", "source": "Water boils at 100 °C."}
    assert judges.json_messages("Water boils.", ["p"])[1]["content"] == \
        "Claim: Water boils.\n\nPassages:\n--- passage 1 ---\np"
    french = judges.choice_state("L'eau bout à 100 °C.", "Au niveau de la mer, l'eau pure bout à 100 °C.")
    assert french["language"] == "The claim and the text are in French."
    russian = judges.json_messages("Вода кипит при 100 °C.", ["Water boils at 100 °C."])[1]["content"]
    assert russian.startswith("The claim is in Russian; the text is in English.\n\nClaim: ")


# ---------------------------------------------------------------- the flows: no model asked

def test_verify_labels_an_unreadable_claim_without_asking_a_judge(ctx):
    """No judge is configured: asking one would give judge_unavailable (or raise), not this row."""
    page = "Au niveau de la mer, l'eau pure bout à 100 °C (212 °F). " * 3
    for claim in UNREAD[:4]:
        row = verify.trace_text(claim, page, ctx).row
        assert (row["label"], row["reason"], row["confidence"], row["method"], row["auto"]) == (
            NOT_FOUND, UNSUPPORTED_LANGUAGE, None, None, False)
    row = verify.trace_text("Water boils at 100 °C.", "水は海面で100 °Cで沸騰する。" * 3, ctx).row
    assert row["reason"] == UNSUPPORTED_LANGUAGE
    assert REASONS[UNSUPPORTED_LANGUAGE].label == NOT_FOUND and not REASONS[UNSUPPORTED_LANGUAGE].transient


def test_check_calls_an_unreadable_claim_unsupported_never_automatic(ctx):
    text = "Au niveau de la mer, l'eau pure bout à 100 °C (212 °F)."
    document = Document("fr.md", text, {"s": Section("s", "fr.md", text)})
    citation = {"id": "q1", "claim": UNREAD[0], "quote": text, "section": None}
    row = check.check_citations(document, [citation], ctx)[0]
    assert (row["status"], row["verdict"], row["reason"], row["auto"], row["relation"]) == (
        "found", VERDICTS[2], UNSUPPORTED_LANGUAGE, False, None)


def test_the_answers_in_french_german_and_russian_extract_in_their_language():
    fr = extract.extract_file(DATA / "answers/markdown_fr.md")
    assert [c["claim"] for c in fr.claims][0] == "Au niveau de la mer, l'eau pure bout à 100 °C."
    ru = extract.extract_file(DATA / "answers/anthropic_web_ru.json").claims[0]
    assert ru["claim"] == "Чистая вода на уровне моря кипит при 100 °C."


def test_a_russian_misquote_prints_its_cyrillic_diff(ctx):
    page = "На уровне моря чистая вода кипит при 100 °C (212 °F). Это значение верно при нормальном давлении."
    match = verify.carried_match(["На уровне моря чистая вода закипает при 100 °C (212 °F)."],
                                 verify.page_of("text:", page), ctx.settings.near_miss_max_chars)
    assert match.status == "misquoted"
    assert match.diff == "На уровне моря чистая вода [-закипает-] {+кипит+} при 100 °C (212 °F)."
    assert json.loads(json.dumps({"diff": match.diff}, ensure_ascii=False))["diff"] == match.diff


def test_mcp_check_answer_flags_the_french_uncited_fact_replaying_the_notebook(tmp_path):
    """The MCP server, offline on the committed cache (notebook 08 recorded these judge calls)."""
    from mcp import ClientSession, StdioServerParameters, stdio_client
    shutil.copy(DATA / "answers/markdown_fr.md", tmp_path / "markdown_fr.md")
    env = {"PYTHONPATH": str(ROOT), "CITECHECK_OFFLINE": "1", "CITECHECK_CACHE_STORE": "off",
           "CITECHECK_CACHE": str(ROOT / "json_cache.json"), "CITECHECK_ALLOW_PRIVATE": "1"}
    params = StdioServerParameters(command=sys.executable, env=env, cwd=str(ROOT),
                                   args=["-m", "citecheck", "mcp", "--root", str(tmp_path)])

    async def talk():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return [await client.call_tool("check_answer", {"answer_file": "markdown_fr.md"}),
                    await client.call_tool("verify_claim", {"claim": UNREAD[0], "urls": [
                        "http://127.0.0.1:8731/fr/articles/point-d-ebullition"]})]
    done, unread = asyncio.run(talk())             # the pages replay too: no site needs to run
    report = json.loads("".join(block.text for block in done.content))
    kinds = {s["text"]: s["kind"] for s in report["sentences"]}
    assert kinds["Une cocotte-minute cuit plus vite parce que l'eau y bout vers 120 °C."] == "uncited"
    assert kinds["N'hésitez pas à me poser d'autres questions."] == "no_claim"
    row = json.loads("".join(block.text for block in unread.content))["citations"][0]
    assert (row["label"], row["reason"]) == (NOT_FOUND, UNSUPPORTED_LANGUAGE)
