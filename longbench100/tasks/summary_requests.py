"""Tell a query-focused summary item (a narrower request, e.g. a QMSum query) from a request for a generic summary."""

from __future__ import annotations

import re

from longbench100.sources.records import Item

# An optional role sentence ("You are a patent examiner."), then a request to summarise the whole text:
# "Please help me summarize this government report.", "Write a summary for the scene.", "Summarize the meeting".
_ROLE = re.compile(r"^you are [^.]*\.\s*", re.IGNORECASE)
_WHOLE_TEXT_SUMMARY = re.compile(
    r"^(please\s+)?(help me\s+|can you\s+)?"
    r"((write|give|generate|provide|create)\s+(me\s+)?an?\s+((brief|short|concise)\s+)?summary\s+(of|for)|summari[sz]e)\s+"
    r"(this|these|the)\s+((whole|entire)\s+)?[\w-]+(\s+[\w-]+)?\s*[.?!]?$",
    re.IGNORECASE,
)


def specific_request(item: Item) -> str:
    """The item's own request when it asks for something narrower than a summary of the whole text, else ``""``."""
    request = (item.question or "").strip()
    return "" if not request or _WHOLE_TEXT_SUMMARY.match(_ROLE.sub("", request)) else request
