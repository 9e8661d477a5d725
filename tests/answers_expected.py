"""What each example answer of data/answers/ gives, exactly: shared by the library tests (test_extract) and
the command tests (test_answers), so the two cannot drift apart."""

SITE = "http://127.0.0.1:8731"

CLAIMS = {
    "markdown.md": [
        (
            "At sea level, pure water boils at 100 °C (212 °F).",
            [f"{SITE}/articles/boiling-point", f"{SITE}/articles/boiling-point-table-2019"],
        ),
        (
            "Water boils at 212 °F at sea level.",
            [f"{SITE}/articles/water-boiling-point", f"{SITE}/blog/2021/03/boiling-at-altitude"],
        ),
        (
            "At 3,000 metres above sea level, water boils at roughly 90 °C, as the altitude guide explains, "
            "which is why pasta takes longer there.",
            [f"{SITE}/guides/cooking-at-altitude"],
        ),
        (
            "A tablespoon of salt raises the boiling point of pasta water by several degrees.",
            [f"{SITE}/articles/boiling-point"],
        ),
        (
            "Limescale inside a kettle raises the temperature at which its water boils.",
            [f"{SITE}/articles/kettle-scale-myths"],
        ),
    ],
    "perplexity.json": [
        (
            "Inside a pressure cooker, water does not boil until it reaches about 120 °C.",
            [f"{SITE}/premium/pressure-cooking", f"{SITE}/articles/steam-tables"],
        ),
        (
            "At 3,000 metres above sea level, water boils at roughly 90 °C.",
            [f"{SITE}/reports/boiling-point-survey.pdf", f"{SITE}/app/boiling-calculator"],
        ),
        ("Water does not boil at 100 °C at sea level.", [f"{SITE}/articles/boiling-point"]),
    ],
    "openai.json": [
        (
            "At sea level, pure water boils at 100 °C (212 °F).",
            [f"{SITE}/articles/boiling-point", f"{SITE}/articles/boiling-point-table-2019"],
        ),
        (
            "Water boils at 212 °F at sea level.",
            [f"{SITE}/articles/water-boiling-point", f"{SITE}/blog/2021/03/boiling-at-altitude"],
        ),
        (
            "Limescale inside a kettle raises the temperature at which its water boils.",
            [f"{SITE}/articles/kettle-scale-myths"],
        ),
    ],
    "anthropic_web.json": [
        ("At sea level, pure water boils at 100 °C (212 °F).", [f"{SITE}/articles/boiling-point"]),
        (
            "Inside a pressure cooker, water does not boil until it reaches about 120 °C.",
            [f"{SITE}/articles/boiling-point", f"{SITE}/premium/pressure-cooking"],
        ),
        (
            "Higher up it is the other way round: at 3,000 metres above sea level, water boils at roughly "
            "90 °C, so food cooked in boiling water takes longer.",
            [f"{SITE}/guides/cooking-at-altitude"],
        ),
    ],
}
"""(claim, urls) of each claim, in order (ids c1, c2, ...)."""

PROBLEMS = {
    "markdown.md": [f"line 22:1: source [5] ({SITE}/articles/steam-tables) is never cited"],
    "perplexity.json": [
        "$.choices[0].message.content, line 5:176: marker [7] has no source "
        "(the numbered sources are [1]-[6])",
        f"$.citations[5]: source [6] ({SITE}/guides/cooking-at-altitude) is never cited",
    ],
    "openai.json": [
        "$.output[1].content[0].annotations[5]: characters 451-571 fall outside the text (531 characters); "
        f"citation of {SITE}/articles/boiling-point skipped"
    ],
    "anthropic_web.json": [],
}
"""Each problem as printed ("where: message"), in order."""

PDF_QUOTES = [
    ("1", 1, 2, "found", "1"),
    ("1", 1, 2, "found", "1"),
    ("1", 1, 3, "found", "1-2"),
    ("1", 1, 2, "misquoted", "1"),
    ("2", 2, 3, "found", "2"),
    ("2", 2, 3, "missing", None),
]
"""anthropic_pdf.json against rfc7519-excerpt.pdf: (section, start_page_number, end_page_number) of each
citation, then its quote's status and the section it was located in."""

RFC_STATUSES = [
    ("found", "4.1.4"),
    ("found", "4.1.1"),
    ("found", "1"),
    ("found", "8"),
    ("missing", None),
    ("found", "4.1.4"),
    ("found", "4.1.7"),
    ("misquoted", "4.1.3"),
]
"""anthropic_rfc.json against data/rfc7519.txt: each citation's status and where its quote was located."""
RFC_CLAIM_IDS = ["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C9"]
"""The data/citations.json claims that anthropic_rfc.json's citations q1-q8 carry."""
