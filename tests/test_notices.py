"""Retraction and correction notices: a retracted, withdrawn or concern page is never supported (HTML and PDF
through a stand-in origin on 127.0.0.1, the judge stand-in saying supported); a correction travels beside the
verdict; hard negatives stay unflagged; the rules' measured numbers on data/notices/."""
import importlib.util

import pdfs
import pytest
from standins.http import StandIn
from test_verify import judge, judge_server, quoting  # noqa: F401 - the judge stand-in and its fixtures

from citecheck.batch.report_csv import CSV_COLUMNS
from citecheck.paths import ROOT
from citecheck.verdict.review import needs_review
from citecheck.verify import public, trace_text, verify_citation, verify_claim
from citecheck.vocabulary import NO_NOTICE, REASONS, BatchRow, CitationRow
from citecheck.web import notices
from citecheck.web.fetch.html_text import readable_markdown

CLAIM = "Water boils at 100 °C at sea level."
BODY = ("<p>At sea level, pure water boils at 100 °C (212 °F). We measured the boiling point of distilled "
        "water in open vessels at 14 coastal stations over two years.</p>"
        "<p>The mean boiling point was 99.97 °C with a standard deviation of 0.04 °C, consistent with the "
        "standard atmosphere at sea level and the accepted value for pure water.</p>")
ELSEVIER = ("<div class='banner'><p>This article has been retracted: please see Elsevier Policy on Article "
            "Withdrawal (https://www.elsevier.com/locate/withdrawalpolicy).</p></div>")
CORRECTED = ("<p>Correction: An earlier version of this article misstated the number of stations. It was 14, "
             "not 41.</p>")


def html(banner: str = "", title: str = "The boiling point of water at sea level") -> str:
    return (f"<html><head><title>{title}</title></head><body><nav><a href='/'>Home</a></nav><main><article>"
            f"{banner}<h1>The boiling point of water at sea level</h1>{BODY}</article></main>"
            "<footer><a href='/corrections'>Corrections policy</a></footer></body></html>")


def pdf(first_lines: list[str]) -> bytes:
    return pdfs.build([first_lines + ["At sea level, pure water boils at 100 °C (212 °F).",
                                      "The mean boiling point was 99.97 °C at 14 coastal stations."]])


PAGES = {
    "/plain": ("text/html; charset=utf-8", html()),
    "/retracted": ("text/html; charset=utf-8", html(ELSEVIER)),
    "/retracted-title": ("text/html; charset=utf-8", html(title="RETRACTED: The boiling point of water")),
    "/concern": ("text/html; charset=utf-8",
                 html("<p>Expression of Concern: readers are alerted that concerns have been raised "
                      "about the data in this article.</p>")),
    "/corrected": ("text/html; charset=utf-8", html(CORRECTED)),
    "/retracted.pdf": ("application/pdf", pdf(["RETRACTED ARTICLE", "This article has been retracted."])),
    "/withdrawn.pdf": ("application/pdf", pdf(["WITHDRAWN: The boiling point of water",
                                               "This article has been withdrawn at the authors' request."])),
    "/plain.pdf": ("application/pdf", pdf(["The boiling point of water at sea level"])),
}


@pytest.fixture(scope="module")
def origin():
    def serve(request):
        content_type, body = PAGES.get(request.path, ("text/plain", "missing"))
        return (200 if request.path in PAGES else 404), {"Content-Type": content_type}, body
    with StandIn(serve) as server:
        yield server


@pytest.fixture
def supporting(judge):  # noqa: F811
    """The judge stand-in says supported, with a quote that is on the page, at confidence 0.97."""
    judge.content = quoting("supported", 0.97)
    return judge


def test_the_judge_says_supported_on_the_same_pages_without_a_notice(supporting, origin, run):  # noqa: F811
    for path in ("/plain", "/plain.pdf"):
        row = verify_citation(CLAIM, origin.url + path, run.ctx, threshold=0.5)
        assert (row["label"], row["reason"], row["notice"], row["auto"]) == ("supported", None, None, True)


@pytest.mark.parametrize("path, reason", [
    ("/retracted", "retracted"),              # the banner above the article, which the extractor drops
    ("/retracted-title", "retracted"),        # only the <title> says so
    ("/concern", "expression_of_concern"),
    ("/retracted.pdf", "retracted"),
    ("/withdrawn.pdf", "withdrawn"),
])
def test_a_retracted_page_that_supports_the_claim_is_never_supported(supporting, judge_server,  # noqa: F811
                                                                      origin, run, path, reason):
    judge_server.requests.clear()
    row = verify_citation(CLAIM, origin.url + path, run.ctx, threshold=0.0)
    assert (row["label"], row["reason"]) == ("not_found", reason)
    assert row["notice"].startswith(f"{reason}: ") and row["confidence"] is None
    assert row["auto"] is False and needs_review(row, 0.0)          # never automatic, even at AUTO_ACCEPT=0
    assert judge_server.requests == []                                # the page settled it: no model asked
    assert REASONS[reason].label == "not_found" and not REASONS[reason].transient


def test_a_correction_notice_travels_beside_the_verdict(supporting, origin, run):  # noqa: F811
    result = public(verify_claim(CLAIM, [origin.url + "/corrected"], run.ctx, threshold=0.5))
    row = result["citations"][0]
    assert (result["overall"], row["label"], row["auto"]) == ("supported", "supported", True)
    assert row["notice"] == ("correction: Correction: An earlier version of this article misstated the "
                             "number of stations. It was 14, not 41.")
    assert "notice" in CitationRow.field_names() and CSV_COLUMNS[-2:] == ("notice", "overall")
    batch_row = BatchRow.from_dict({**row, "id": "1", "claim": CLAIM, "overall": "supported"})
    assert batch_row.notice == row["notice"]


def test_trace_text_reads_the_notice_too(supporting, run):  # noqa: F811
    text = "Retraction Note: The boiling point of water\n\nThe Editors have retracted this Article.\n\n" \
           "At sea level, pure water boils at 100 °C (212 °F)."
    assert trace_text(CLAIM, text, run.ctx).row["reason"] == "retracted"


def test_a_banner_the_extractor_drops_is_put_back_first_and_only_then():
    assert readable_markdown(html(ELSEVIER)).startswith("This article has been retracted: please see")
    assert readable_markdown(html()).startswith("# The boiling point")     # nothing added to a page with none
    assert readable_markdown(html(CORRECTED)).startswith("Correction: An earlier")  # trafilatura keeps it


@pytest.mark.parametrize("text", [
    "Nicotine withdrawal: symptoms and how to manage them\n\nWithdrawal symptoms peak in three days.",
    "City council approves bike lanes\n\nThe council voted 7 to 2.\nCorrections policy | Contact us",
    "Vaccines do not cause autism\n\nThe 1998 paper behind the scare was retracted by The Lancet in 2010.",
    "Why the number of retracted papers is rising\n\nMore than 10,000 papers were retracted in 2023.",
    "Retractions are good for science\n\nRetractions: a brief history of the practice.",
    "Conditions générales de vente\n\nDroit de rétractation : vous disposez d'un délai de quatorze jours.",
    "Widerrufsbelehrung\n\nWiderrufsrecht: Sie haben das Recht, binnen vierzehn Tagen zu widerrufen.",
    "Отзывы покупателей\n\nОтзывы: 4,6 из 5.",
    "A study\n\n" + "Plain text. " * 200 + "\nThis article has been retracted.",   # past the first screen
])
def test_hard_negatives_stay_unflagged(text):
    assert notices.find(text) is None


def test_a_hard_negative_page_is_judged_as_usual(supporting, origin, run):  # noqa: F811
    # the plain page has a "Corrections policy" footer link and a "withdrawal" free body: no notice
    assert verify_citation(CLAIM, origin.url + "/plain", run.ctx)["notice"] is None


def _script():
    spec = importlib.util.spec_from_file_location("notice_rule", ROOT / "scripts/notice_rule.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_labelled_set_is_the_one_build_writes_and_covers_four_languages():
    spec = importlib.util.spec_from_file_location("build", ROOT / "data/notices/build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    rows = _script().rows()
    assert rows == build.rows() and len(rows) >= 150 and len({r["id"] for r in rows}) == len(rows)
    assert {r["lang"] for r in rows} == {"en", "fr", "de", "ru"}
    assert {r["label"] for r in rows} == {*notices.SETTLING_NOTICES, notices.CORRECTION, NO_NOTICE}


def test_the_rules_measured_numbers_on_the_report_half():
    script = _script()
    report = [row for row in script.rows() if script.half(row) == "report"]
    scores = script.scores(report)
    both, said, labelled = scores["settling"]
    assert both / said >= 0.95 and both / labelled >= 0.90       # docs/api.md: 0.978 and 0.938
    both, said, labelled = scores["correction"]
    assert both / said >= 0.90 and both / labelled >= 0.65       # docs/api.md: 0.938 and 0.682
    assert scores["kind"][0] == scores["kind"][1]                 # a settling page gets its own kind


def test_the_batch_html_report_shows_the_notice_beside_the_verdict():
    from citecheck.report.report_html import render
    row = BatchRow.from_dict({"id": "1", "claim": CLAIM, "url": "https://example.org/a", "label": "supported",
                              "confidence": 0.97, "auto": True, "overall": "supported",
                              "notice": "correction: Correction: An earlier version erred."}).to_dict()
    page = render([row], batch="b", threshold=0.9)
    assert "notice: correction: Correction: An earlier version erred." in page
