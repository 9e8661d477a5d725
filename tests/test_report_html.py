"""batch: every row gated (rows, CSV, audit), re-gated on resume; `--report` writes one self-contained,
escaped HTML file."""
from __future__ import annotations

import base64
import html
import json
import re
import subprocess
import sys

from test_review_app import HOSTILE, assert_inert, parsed

from citecheck import audit, batch
from citecheck.paths import ROOT
from citecheck.report import report_html


def fake(claim, url):
    """confidence from the URL: /hi 0.9, /lo 0.5, /dead no model asked, /hostile a page full of markup."""
    if url.endswith("/dead"):
        return {"url": url, "label": "unreachable", "reason": "http_404"}
    confidence = 0.9 if url.endswith("/hi") else 0.5
    return {"url": url, "label": "contradicted" if "hostile" in url else "supported", "confidence": confidence,
            "evidence_quote": "quote", "passages": [f"the page for {url}", HOSTILE]}


def claims(tmp_path):
    items = [{"id": "c1", "claim": "one", "urls": ["http://x/hi", "http://x/lo"]},
             {"id": "c2", "claim": "Claim " + HOSTILE, "urls": ["http://x/dead", "http://x/hostile/lo"]}]
    path = tmp_path / "claims.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return path


def test_rows_csv_and_audit_carry_the_gate_and_a_resume_regates_without_redeciding(tmp_path, ctx):
    path = claims(tmp_path)
    first = batch.run_batch(path, ctx, verify=fake, threshold=0.8)
    assert [(r["url"].rsplit("/", 1)[1], r["auto"]) for r in first.rows] == [
        ("hi", True), ("lo", False), ("dead", True), ("lo", False)]
    batch.write_csv(first.rows, tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text().splitlines()[0].endswith(
        ",rid,auto,auto_note,method,span_start,span_end,status,diff,notice,overall")
    conn = audit.connect(ctx.settings.journal)
    stored = audit.decided(conn, "claims")
    assert json.loads(stored[("c1", "http://x/hi")]["passages"])[0] == "the page for http://x/hi"
    assert stored[("c2", "http://x/dead")]["passages"] is None
    again = batch.run_batch(path, ctx, verify=fake, threshold=1.0)        # AUTO_ACCEPT=1, nothing re-checked
    assert again.decided == 0 and [r["auto"] for r in again.rows] == [False] * 4
    restored = audit.decided(conn, "claims")
    assert {k: r["decided_at"] for k, r in restored.items()} == {k: r["decided_at"] for k, r in stored.items()}
    assert [restored[k]["auto"] for k in sorted(restored)] == [False] * 4


def test_the_report_is_one_self_contained_escaped_file(tmp_path, ctx):
    result = batch.run_batch(claims(tmp_path), ctx, verify=fake, threshold=0.8)
    out = tmp_path / "report.html"
    report_html.write_report(result.rows, out, batch="claims", threshold=0.8, problems=["line 3: not valid JSON"])
    text = out.read_text(encoding="utf-8")
    assert_inert(text, images=True)
    tags = parsed(text)
    images = [value for name, value in tags.attributes if name == "src"]
    assert len(images) == 3 and all(v.startswith("data:image/png;base64,") for v in images)
    assert all(base64.b64decode(v.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n" for v in images)
    assert not re.search(r'(href|src)="(https?:)?//', text)                 # nothing fetched from anywhere
    assert "script-src 'none'" in html.unescape(text) and "img-src data:" in text
    assert "citation_precision" in text and "0.5000 (2/4)" in text and "line 3: not valid JSON" in text
    assert "Claim &lt;img src=x onerror=&#34;alert(1)&#34;&gt; and &lt;script&gt;" in text
    queue_part = text[text.index("The queue"):text.index("Every citation")]
    assert re.findall(r"<td>(c\d)</td>", queue_part) == ["c2", "c1"]          # contradicted first
    assert len(re.findall(r"<tr><td>c\d</td>", text[text.index("Every citation"):])) == 4


def test_batch_cli_writes_the_report(tmp_path):
    path = claims(tmp_path)
    path.write_text(path.read_text().replace("http://x/", "http://127.0.0.1:9/"), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "citecheck", "batch", str(path), "--db", str(tmp_path / "a.db"),
                           "--report", str(tmp_path / "r.html")], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert_inert(text, images=True)
    assert "citation_precision=" not in text and "citation_precision" in text and "batch claims" in text


def test_reports_keep_the_mode_of_the_file_they_replace_and_get_the_umask_mode_when_new(tmp_path):
    import os
    import stat

    from citecheck.batch.report_csv import CSV_COLUMNS, write_csv
    from citecheck.files import new_file_mode
    from citecheck.report.report_html import write_report
    rows = [dict.fromkeys(CSV_COLUMNS) | {"label": "supported", "auto": True}]
    fresh = tmp_path / "new.csv"
    write_csv(rows, fresh)
    assert stat.S_IMODE(os.stat(fresh).st_mode) == new_file_mode() != 0o600
    kept = tmp_path / "shared.html"
    kept.write_text("old")
    os.chmod(kept, 0o640)
    write_report([], kept, batch="b", threshold=0.8)
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o640 and "<html" in kept.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.csv", "shared.html"]      # no temp file left
