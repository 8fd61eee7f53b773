"""Power-log readers, one module per format, all shaped alike (`TOOL`, `detect`, `parse`).

`sources.power.registry` picks the reader (auto-detected or forced) and checks the frame
against `schemas.power.POWER_SAMPLES`.
"""
