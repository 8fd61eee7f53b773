"""The files a run writes beside the HTML: the workbook that computes (xlsx), the stackable CSV
and Parquet, and the writer of every output of a run (outputs)."""
