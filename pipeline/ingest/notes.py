"""A source's ingest notes, folded by kind for the summary `scorecard ingest` prints (each
note as written, URLs included, with `--verbose`).

A note is `subject: message` (a URL, zone, offer or day, then what happened) or a message
alone. Notes whose messages differ only in their whole numbers are one kind: they print as one
line, the numbers summed, with how many notes it folds and their subjects (URLs are counted as
responses, not printed): 44 notes `https://...?zone=FR: 3 of 24 value(s) are estimates`
become `132 of 1056 value(s) are estimates (44 responses)`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: `subject: message`, the subject one word (a URL, a zone, an offer code, a day).
_SUBJECT = re.compile(r"(\S+): (.+)", re.DOTALL)
#: A whole number standing alone (not in a word, a date, a decimal or a quoted code).
_NUMBER = re.compile(r"(?<![\w.'\-/:])\d+(?![\w.'\-/:])")
#: Subjects listed by name before the rest are counted.
SHOWN_SUBJECTS = 5


def fold(notes: Sequence[str]) -> list[str]:
    """One line per kind of note, in the order each kind first appears."""
    kinds: dict[tuple[str, ...], list[tuple[str, list[int]]]] = {}
    for note in notes:
        match = _SUBJECT.fullmatch(note)
        subject, message = (match.group(1), match.group(2)) if match else ("", note)
        texts = tuple(_NUMBER.split(message))
        numbers = [int(n) for n in _NUMBER.findall(message)]
        kinds.setdefault(texts, []).append((subject, numbers))
    return [_line(texts, members) for texts, members in kinds.items()]


def _line(texts: tuple[str, ...], members: list[tuple[str, list[int]]]) -> str:
    sums = [sum(numbers[i] for _, numbers in members) for i in range(len(texts) - 1)]
    message = "".join(text + (str(sums[i]) if i < len(sums) else "")
                      for i, text in enumerate(texts))
    subjects = list(dict.fromkeys(subject for subject, _ in members if subject))
    urls = [s for s in subjects if "://" in s]
    named = [s for s in subjects if "://" not in s]
    said = []
    if urls:
        said.append(f"{len(urls)} response{'s' if len(urls) > 1 else ''}")
    if named:
        shown = ", ".join(named[:SHOWN_SUBJECTS])
        more = len(named) - SHOWN_SUBJECTS
        said.append(shown + (f" and {more} more" if more > 0 else ""))
    if len(members) > len(subjects):  # notes without a subject, or one subject twice
        said.append(f"{len(members)} notes")
    if len(members) == 1 and not urls:
        return f"{named[0]}: {message}" if named else message
    return f"{message} ({'; '.join(said)})" if said else message
