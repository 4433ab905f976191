"""The evaluator's prompt for one chunk (is it needed to answer the query?) and the parser of its reply.

The prompt follows the structure of ETHIC's information-coverage evaluator in our own words: the
task, the chunk marked as a fragment of a longer text, the query with an instruction not to answer
it, a 0/1 rubric, and a reply in four labelled parts ending in a single 0 or 1.
"""

from __future__ import annotations

import re

COVERAGE_METRIC = "coverage"

_PROMPT = """You are helping to measure how much of a long text a question really depends on.

Below is one fragment cut from a much longer text, followed by a query about the whole text. Decide whether this fragment is needed, or could be needed, to answer the query. Do not answer the query yourself.

[Fragment of a longer text]
{chunk}
[End of fragment]

[Query]
{query}
[End of query]

Score the fragment:
- 1: the fragment holds information that is needed, or may well be needed, to answer the query (facts the answer rests on, items that must be counted or compared, a passage the query points to).
- 0: the query can be answered just as well without this fragment (it is unrelated or only background).

Reply in exactly this form:
Query understanding: <what the query asks for, one or two sentences>
Fragment understanding: <what the fragment contains, one or two sentences>
Assessment: <whether the fragment is needed, and why>
Final score: <0 or 1>"""

_FINAL = re.compile(
    r"final\s*score\s*[:：=\-]?\s*\**\s*\[?\s*([01])(?!\d|\.\d|\s*(?:or|/|-|to|and)\s*[01])",
    re.IGNORECASE,
)
_FINAL_LOOSE = re.compile(r"final\s*score", re.IGNORECASE)
_PARTS = {
    "query_understanding": re.compile(r"query\s+understanding\s*[:：]\s*(.*)", re.IGNORECASE),
    "fragment_understanding": re.compile(
        r"(?:fragment|passage)\s+understanding\s*[:：]\s*(.*)", re.IGNORECASE
    ),
    "assessment": re.compile(r"assessment\s*[:：]\s*(.*)", re.IGNORECASE),
}
_THINK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)


def coverage_prompt(chunk: str, query: str) -> str:
    """The evaluator prompt asking whether ``chunk`` is needed to answer ``query``."""
    return _PROMPT.format(chunk=chunk, query=query.strip())


def coverage_parts(reply: str) -> dict | None:
    """The labelled parts of a reply and its decision (``score`` 0 or 1), or ``None`` when the reply
    gives no single final 0/1.

    The last ``Final score`` label decides (markdown emphasis and brackets around the digit are
    accepted); a reply without that label counts only when its whole text is a bare 0 or 1. A label
    followed by anything else ("0.5", "yes", the rubric's own "0 or 1" echoed back, two labels that
    disagree) leaves the chunk undecided.
    """
    text = _THINK.sub("", reply).strip()
    labelled = _FINAL_LOOSE.findall(text)
    decisions = [int(match) for match in _FINAL.findall(text)]
    if labelled:
        if len(decisions) != len(labelled) or len(set(decisions)) != 1:
            return None
        score = decisions[-1]
    else:
        bare = text.strip(" *.`\n")
        if bare not in ("0", "1"):
            return None
        score = int(bare)
    parts: dict = {"score": score}
    for name, pattern in _PARTS.items():
        match = pattern.search(text)
        parts[name] = match.group(1).strip() if match else None
    return parts


def coverage_score(parts: dict) -> float:
    """The decision of valid reply parts as 0.0 or 1.0."""
    return float(parts["score"])


def parse_coverage(reply: str) -> float | None:
    """The decision of a reply as 0.0 or 1.0, or ``None`` when it cannot be read."""
    parts = coverage_parts(reply)
    return None if parts is None else coverage_score(parts)
