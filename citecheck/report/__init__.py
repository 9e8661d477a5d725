"""report: what people read — figures, the one Jinja2 environment, the self-contained HTML report.

Owns: `plots` (figures for both flows, with alt text), `render_html` (autoescaped templates, evidence
marks, the Content-Security-Policy), `report_html` (`batch --report`), `templates/`.
Imports: the foundation, `matching` and `verdict`; never a flow or a server.
"""
