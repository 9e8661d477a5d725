"""source: a document as text and sections — loading, PDF text and its repair, text hygiene.

Owns: `text` (UTF-8 files, no lone surrogates), `document` (Document, Section), `sources` (load a source,
split it into sections, read a citations file), `pdf_text` (a PDF as a Document, within its limits),
`pdf_repair` (what PDF extraction does to prose, undone), `sandbox` (a parser in a child process a deadline
kills, under a memory cap: PDF reading and HTML extraction).
Imports: the foundation only (vocabulary, config, cancellation).
"""
