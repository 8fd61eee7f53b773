"""Print the HTML report to PDF with headless Chromium, when it is installed.

No silent skip: without a Chromium binary, `write_pdf` raises ChromiumMissing, whose message
says how to install one; the CLI prints it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

#: Where to look, in order; $SCORECARD_CHROMIUM wins when set.
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-extensions", "--hide-scrollbars")


class ChromiumMissing(RuntimeError):
    pass


class ChromiumFailed(RuntimeError):
    pass


def find_chromium() -> str | None:
    explicit = os.environ.get("SCORECARD_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).exists() else None
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def run_chromium(args: list[str], timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium with a fresh profile folder and the given extra arguments."""
    binary = find_chromium()
    if binary is None:
        raise ChromiumMissing(
            "PDF needs headless Chromium, which is not installed. On Debian/Ubuntu: "
            "`apt-get install chromium` (or set SCORECARD_CHROMIUM to a Chromium or Chrome "
            "binary). The HTML report was written; open it in a browser and print it.")
    with tempfile.TemporaryDirectory(prefix="scorecard-chromium-") as profile:
        done = subprocess.run([binary, *FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise ChromiumFailed(f"chromium exited with {done.returncode}: "
                             f"{done.stderr.strip()[-800:]}")
    return done


def write_pdf(html_path: Path, pdf_path: Path) -> None:
    """Print `html_path` (a local file) to `pdf_path`, A4 landscape (the page's @page)."""
    pdf_path = pdf_path.resolve()
    pdf_path.unlink(missing_ok=True)
    run_chromium([f"--print-to-pdf={pdf_path}", "--no-pdf-header-footer",
                  html_path.resolve().as_uri()])
    if not pdf_path.exists() or not pdf_path.read_bytes()[:5] == b"%PDF-":
        raise ChromiumFailed(f"chromium did not write a PDF to {pdf_path}")
