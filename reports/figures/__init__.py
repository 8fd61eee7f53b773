"""The report's charts: Vega-Lite specs built as dicts and drawn by vl-convert (charts), and the
HTML sections that hold them with their captions and alt text (sections)."""
