"""api: property-based requests generated from /openapi.json (/verify, /check-answer) never get a 500 and
match the schema."""
import hashlib

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from citecheck.answer.checks import Checked
from citecheck.answer.read import read
from citecheck.answer.rows import build
from citecheck.context import RunContext
from citecheck.serve.api import Limits, create_app
from citecheck.vocabulary import NO_SOURCE

LABELS = ("supported", "contradicted", "not_found", "unreachable")


def stub_verify(claim, urls, quotes=None):
    """No network: a label per URL derived from its hash, so every label shape is exercised."""
    citations = []
    for url in urls:
        label = LABELS[hashlib.sha256(url.encode("utf-8", "surrogatepass")).digest()[0] % 4]
        citations.append({"url": url, "label": label, "evidence_quote": None, "confidence": None,
                          "final_url": None, "original_status": None, "rid": None,
                          "reason": "http_404" if label == "unreachable" else None})
    labels = {c["label"] for c in citations}
    overall = next((lab for lab in ("contradicted", "supported") if lab in labels), None)
    overall = overall or ("unreachable" if labels == {"unreachable"} else "not_found")
    return {"claim": claim, "overall": overall, "citations": citations}


def stub_check_answer(text, fmt):
    """No network: the real reader and report rows, each marker's source labelled by its place."""
    got = read(text, fmt)
    return build("answer", got, {m.id: Checked(None, NO_SOURCE if m.source is None else LABELS[i % 4])
                                 for i, m in enumerate(got.markers)}).to_dict()


APP = create_app(RunContext.build(), stub_verify, limits=Limits(), check_answer=stub_check_answer)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)
schema.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], max_examples=50)
# A schema-violating body must be refused: 422 when parsed, 413 when too big to parse, 400 for a bad length.
schema.config.checks.negative_data_rejection.expected_statuses = ["400", "413", "422"]

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          negative_data_rejection]


@schema.parametrize()
@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors_and_responses_match_the_schema(case):
    case.call_and_validate(checks=CHECKS)
