"""The comment line that says when a Prometheus scrape was taken.

The text exposition (`/metrics` of vLLM, of dcgm-exporter, ...) carries no time of its own, so
a scrape log puts one before each scrape. Users curling several exporters write one style for
all, so every reader accepts each spelling: `# scraped_at: <time>`, `# scrape_utc: <time>`,
`# scrape_time: <time>` (`=` or a space instead of `:` too). What the time may be (ISO-8601,
epoch seconds, naive local) is each reader's rule.
"""

from __future__ import annotations

#: Group 1 is the time text, trimmed. A plain pattern: Python `re` and polars read it alike.
SCRAPE_TIME_COMMENT = r"^#\s*scrape(?:d_at|[_ ]?(?:utc|time))\s*[:= ]\s*(\S(?:.*\S)?)\s*$"
