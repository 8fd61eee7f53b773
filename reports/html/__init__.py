"""The HTML report and what prints it: the summary a committee reads first (first_screen), the
great-tables scorecard (scorecard_table), the appendix sections (report), the vintage diff
(diff_report), the methodology text and the PDF through headless Chromium (pdf). Each gathers
what its part shows; the templates of reports/templates/ lay it out (reports/page.py)."""
