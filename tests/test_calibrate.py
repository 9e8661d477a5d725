"""calibrate on hand-checked labels: the split, the threshold chosen on tune, the report half's precision with
its intervals, the review share, AUTO_ACCEPT=1 with its reason, and too few labels."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from citecheck import audit
from citecheck.audit import reviews
from citecheck.evaluation import calibrate
from citecheck.config import Settings
from citecheck.paths import ROOT
from citecheck.verdict import review

# (confidence, the reviewer agreed) by hand. Tune: at 0.6, 10 accepted and 9 right (0.97 is wrong) = 0.90,
# the first threshold with >= 10 accepted reaching 0.9 (at 0.5: 11 accepted, 9 right = 0.818).
TUNE = [(0.2, False), (0.3, False), (0.4, True), (0.5, False), (0.6, True), (0.7, True), (0.75, True),
        (0.8, True), (0.85, True), (0.9, True), (0.92, True), (0.95, True), (0.97, False), (0.99, True)]
# Report at 0.6: 9 accepted (0.65 ... 1.0), 8 right (0.8 is wrong) = 0.889; 3 of 12 to review.
REPORT = [(0.1, False), (0.35, True), (0.55, False), (0.65, True), (0.7, True), (0.8, False), (0.85, True),
          (0.9, True), (0.93, True), (0.96, True), (0.98, True), (1.0, True)]
TUNE_IDS = ["r03", "r04", "r05", "r06", "r08", "r10", "r13", "r15", "r16", "r17", "r18", "r19", "r20", "r21"]
REPORT_IDS = ["r01", "r02", "r07", "r09", "r11", "r12", "r14", "r22", "r27", "r28", "r29", "r30"]


def key(item_id: str) -> dict:
    return {"batch": "hand", "id": item_id, "url": f"http://h/{int(item_id[1:])}"}


def labelled_db(path, tune=TUNE, report=REPORT, extras=True, model=""):
    """The hand-checked rows (decided by `model`), reviewed; plus (extras) 4 unreviewed rows and a reviewed
    misquote."""
    conn = audit.connect(path)
    for item_id, (confidence, agreed) in [*zip(TUNE_IDS, tune), *zip(REPORT_IDS, report)]:
        row = audit.write_citation(conn, "hand", item_id, "claim", {
            "url": key(item_id)["url"], "label": "supported", "confidence": confidence,
            "auto": confidence >= 0.8}, model)
        reviews.record(conn, reviews.Decision(
            "hand", item_id, row["url"], row["decided_at"], None, "confirm" if agreed else "correct",
            None if agreed else "not_found", "", "Ann"), audit.utc_now())
    if extras:
        for item_id, citation in [("u1", {"confidence": 0.3}), ("u2", {"confidence": 0.7}),
                                  ("u3", {"confidence": None, "label": "unreachable", "reason": "http_404"}),
                                  ("u4", {"confidence": 0.95, "flow": "source", "status": "misquoted"}),
                                  ("m1", {"confidence": 0.99, "flow": "source", "status": "misquoted"})]:
            row = audit.write_citation(conn, "hand", item_id, "claim",
                                       {"url": "doc.txt", "label": "verified", **citation})
        reviews.record(conn, reviews.Decision("hand", "m1", "doc.txt", row["decided_at"], None, "correct",
                                              "unsupported", "", "Ann"), audit.utc_now())
    return conn


def test_the_split_is_a_fixed_rule_of_the_key():
    assert [calibrate.split_of(key(i)) for i in TUNE_IDS] == ["tune"] * 14
    assert [calibrate.split_of(key(i)) for i in REPORT_IDS] == ["report"] * 12


def test_calibrate_chooses_on_tune_and_reports_on_report(tmp_path):
    conn = labelled_db(tmp_path / "a.db")
    labels = calibrate.labelled(conn)
    assert len(labels) == 26 and "m1" not in {r["id"] for r in labels}       # the misquote is not gated
    result = calibrate.calibrate(conn, target=0.9)
    assert (result.tune, result.report, result.threshold, result.auto_accept) == (14, 12, 0.6, 0.6)
    assert (result.point["accepted"], result.point["accepted_correct"], result.point["review"]) == (9, 8, 3)
    assert result.wilson == pytest.approx((0.565, 0.980), abs=0.001)            # Wilson (8, 9), by hand
    low, high = result.bootstrap
    assert low < 8 / 9 < high <= 1.0 and low > 0.4
    # to review at 0.6: tune 4 + report 3 + u1 (0.3) + the two misquotes; u2 (0.7) and the 404 are automatic
    assert (result.to_review, result.in_scope) == (10, 31)
    lines = calibrate.report_lines(result)
    assert lines[0] == "AUTO_ACCEPT=0.6"
    assert "report half: 9 accepted, 8 right: precision 0.889 (95 % Wilson 0.565-0.980; bootstrap" in lines[3]
    assert lines[3].endswith("to review 3/12 (25.0%)")
    assert lines[4] == "review share at AUTO_ACCEPT=0.6: 10/31 (32.3%) of the decided citations in scope"


def test_no_threshold_reaching_the_target_is_auto_accept_1_with_the_reason(tmp_path):
    result = calibrate.calibrate(labelled_db(tmp_path / "a.db"), target=0.95)
    lines = calibrate.report_lines(result)
    assert lines[0] == "AUTO_ACCEPT=1" and result.threshold is None
    assert lines[1] == ("reason: no threshold reaches 0.95 on the tune half: the best any threshold reaches is "
                        "0.900 (at 0.6); every verdict goes to a person")
    assert lines[-1] == "review share at AUTO_ACCEPT=1: 31/31 (100.0%) of the decided citations in scope"


def test_too_few_labels_says_how_many_it_has_and_needs(tmp_path):
    conn = labelled_db(tmp_path / "a.db", tune=TUNE[:5], report=REPORT[:4], extras=False)
    with pytest.raises(ValueError, match=r"needs at least 20 reviewed citations with a model confidence, 10 in "
                                         r"each half; in the audit DB there are 9 \(5 tune, 4 report\)"):
        calibrate.calibrate(conn)
    with pytest.raises(ValueError, match=r"in batch other there are 0"):
        calibrate.calibrate(conn, batch="other")


def test_every_label_from_the_queue_is_pointed_out(tmp_path):
    conn = labelled_db(tmp_path / "a.db")
    conn.execute("UPDATE citations SET auto = 0")
    conn.commit()
    assert "every label came from the queue" in calibrate.report_lines(calibrate.calibrate(conn))[-1]


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "citecheck", "calibrate", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, env={**os.environ, **(env or {})})


def test_the_cli(tmp_path):
    labelled_db(tmp_path / "a.db").close()
    done = run_cli("--audit-db", str(tmp_path / "a.db"), "--batch", "hand", "--target", "0.90")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "AUTO_ACCEPT=0.6"
    missing = run_cli("--audit-db", str(tmp_path / "none.db"))
    assert missing.returncode == 1 and missing.stderr.strip().endswith("none.db does not exist: pass --audit-db "
                                                                       "or set AUDIT_DB")
    assert not (tmp_path / "none.db").exists()
    few = run_cli("--audit-db", str(tmp_path / "a.db"), "--batch", "nobody")
    assert few.returncode == 1 and len(few.stderr.strip().splitlines()) == 1 and "there are 0" in few.stderr
    assert run_cli("--audit-db", str(tmp_path / "a.db"), "--target", "2").returncode == 1


def test_model_uses_only_that_models_labels(tmp_path):
    conn = labelled_db(tmp_path / "a.db", model="m")
    result = calibrate.calibrate(conn, target=0.9, model="m")
    assert (result.tune, result.report, result.threshold, result.in_scope) == (14, 12, 0.6, 26)
    with pytest.raises(ValueError, match=r"in the audit DB for model other there are 0"):
        calibrate.calibrate(conn, model="other")


def test_write_records_the_model_and_the_flows_then_gate_it_by_that(tmp_path):
    labelled_db(tmp_path / "a.db", model="m").close()
    table = tmp_path / "gate.json"
    table.write_text(json.dumps({"kept": {"threshold": 0.5}}))
    env = {"AUTO_ACCEPT_TABLE": str(table)}
    done = run_cli("--audit-db", str(tmp_path / "a.db"), "--model", "m", "--write", env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "AUTO_ACCEPT=0.6"
    assert lines[-2] == (f"in force for m now: uncalibrated: no AUTO_ACCEPT for m in {table}: run `calibrate "
                         "--model m --write` or set AUTO_ACCEPT")
    assert lines[-1] == f"wrote {table}: m AUTO_ACCEPT=0.6"
    written = json.loads(table.read_text())
    entry = written["m"]
    assert written["kept"] == {"threshold": 0.5}                                 # other models' entries kept
    assert {k: entry[k] for k in ("threshold", "precision", "n", "target", "batch")} == {
        "threshold": 0.6, "precision": 0.8889, "n": 26, "target": 0.9, "batch": None}
    assert entry["interval"] == pytest.approx([0.565, 0.980], abs=0.001) and len(entry["date"]) == 10
    assert set(entry) == set(review.ENTRY_KEYS)
    gate = review.Gate.of(Settings(auto_accept_table=table))                     # the next run's gate
    accepted = [review.gated({"label": "supported", "confidence": c}, gate, "m")["auto"] for c in (0.6, 0.59)]
    assert accepted == [True, False]
    assert review.gated({"label": "supported", "confidence": 0.99}, gate, "n")["auto"] is False
    again = run_cli("--audit-db", str(tmp_path / "a.db"), "--model", "m", "--target", "0.95", "--write",
                    env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-2] == f"in force for m now: AUTO_ACCEPT=0.6 ({table})"
    assert json.loads(table.read_text())["m"]["threshold"] == 1.0 and json.loads(table.read_text())["m"][
        "precision"] is None
    gate = review.Gate.of(Settings(auto_accept_table=table))
    assert gate.threshold("m") is None and "calibrated: no AUTO_ACCEPT reaches precision 0.95 for m" in \
        review.gated({"label": "supported", "confidence": 1.0}, gate, "m")["auto_note"]


def test_write_needs_a_model_and_never_overwrites_a_malformed_table(tmp_path):
    labelled_db(tmp_path / "a.db", model="m").close()
    no_model = run_cli("--audit-db", str(tmp_path / "a.db"), "--write")
    assert no_model.returncode == 1 and "--write needs --model" in no_model.stderr
    table = tmp_path / "gate.json"
    table.write_text("{broken")
    bad = run_cli("--audit-db", str(tmp_path / "a.db"), "--model", "m", "--write",
                  env={"AUTO_ACCEPT_TABLE": str(table)})
    assert bad.returncode == 1 and f"AUTO_ACCEPT_TABLE {table} is not JSON" in bad.stderr
    assert table.read_text() == "{broken"


def test_a_row_with_a_text_confidence_is_skipped_with_one_stderr_line(tmp_path):
    path = tmp_path / "a.db"
    conn = labelled_db(path)
    direct = calibrate.calibrate(conn)
    conn.execute("UPDATE citations SET confidence = 'high' WHERE id IN ('r03', 'u1')")
    conn.commit()
    skipped: list = []
    result = calibrate.calibrate(conn, skipped=skipped)
    conn.close()
    assert [r["id"] for r in skipped] == ["r03"] and result.tune == direct.tune - 1
    assert result.in_scope == direct.in_scope and result.threshold == direct.threshold
    done = run_cli("--audit-db", str(path))
    assert done.returncode == 0 and done.stdout.startswith("AUTO_ACCEPT=")
    assert done.stderr.splitlines() == ["calibrate: skipped 1 reviewed row with an invalid confidence (first: "
                                        "batch 'hand', id 'r03', url 'http://h/3': confidence 'high' is not "
                                        "a number from 0 to 1)"]


# ---------------------------------------------------------------- the table and the rule, hardened

def test_a_deeply_nested_table_is_one_line_not_a_traceback(tmp_path):
    table = tmp_path / "gate.json"
    table.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match=r"AUTO_ACCEPT_TABLE .*gate.json nests deeper than 64 levels"):
        review.read_table(table)


def test_a_fifo_table_is_one_line_naming_it_never_a_hang(tmp_path):
    import threading
    table = tmp_path / "gate.json"
    os.mkfifo(table)
    got: list = []

    def read():
        try:
            got.append(review.read_table(table))
        except ValueError as exc:
            got.append(str(exc))
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    hung = reader.is_alive()
    if hung:                                   # release the blocked open so the test process can end
        with open(table, "w"):
            pass
    assert not hung, "reading a FIFO as the gate table hung"
    assert got and "not a file" in got[0] and "gate.json" in got[0]


def test_write_refuses_a_symlinked_table_and_leaves_both_files_as_they_were(tmp_path):
    labelled_db(tmp_path / "a.db", model="m").close()
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    table = tmp_path / "gate.json"
    table.symlink_to(elsewhere)
    done = run_cli("--audit-db", str(tmp_path / "a.db"), "--model", "m", "--write",
                   env={"AUTO_ACCEPT_TABLE": str(table)})
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "is a symbolic link: not replaced" in done.stderr
    assert table.is_symlink() and elsewhere.read_text() == "{}"


def test_model_names_are_printed_without_their_escape_sequences(tmp_path):
    evil = "m\x1b[2J\x1b]0;owned\x07"
    labelled_db(tmp_path / "a.db", model=evil).close()
    done = run_cli("--audit-db", str(tmp_path / "a.db"), "--model", evil, "--write",
                   env={"AUTO_ACCEPT_TABLE": str(tmp_path / "gate.json")})
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout
    assert "m\\x1b[2J" in done.stdout
    assert evil in json.loads((tmp_path / "gate.json").read_text())      # the table keeps the real name


def test_identical_confidences_never_earn_a_threshold(tmp_path):
    """50 labels all at 0.0001, all confirmed: accepting everything is 100 % precise on tune, but nothing
    showed that the confidence orders anything; a threshold must send some tune verdict to a person."""
    conn = audit.connect(tmp_path / "a.db")
    for n in range(50):
        row = audit.write_citation(conn, "crafted", f"c{n}", "claim", {
            "url": f"http://h/{n}", "label": "supported", "confidence": 0.0001, "auto": False}, "m")
        reviews.record(conn, reviews.Decision("crafted", f"c{n}", row["url"], row["decided_at"], None,
                                              "confirm", None, "", "Ann"), audit.utc_now())
    result = calibrate.calibrate(conn, model="m")
    assert result.threshold is None and result.auto_accept == 1.0
    assert calibrate.report_lines(result)[1].startswith("reason: no threshold reaches 0.9 on the tune half: "
                                                        "no threshold accepts 10 verdicts")
