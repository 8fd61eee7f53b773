"""The one error a parser raises: it names the source (tool or publisher), the file and the
field or line at fault, so a user can open the file and see what went wrong."""

from __future__ import annotations


class ParseError(ValueError):
    """Raised by every parse function for bytes it cannot read as its format.

    `source` is the tool or publisher (e.g. "vllm", "nvidia-smi"), `path` the file (or URL) the
    bytes came from, `where` the field, key, line or byte offset at fault.
    """

    def __init__(self, source: str, path: str, where: str, message: str) -> None:
        self.source = source
        self.path = path
        self.where = where
        self.reason = message
        super().__init__(f"{source}: {path}: {where}: {message}")
