"""How topical are rag_hard's negatives? ``python bench/bench_negatives.py HARD RANDOM``

HARD and RANDOM are data folders generated with ``--tasks rag_hard`` and ``--negatives bm25`` /
``--negatives random``. For each, it reads the prompts alone (it imports nothing from longbench100)
and prints, per length: the mean TF-IDF cosine (scikit-learn, fitted on the prompt's own passages)
between the question and the gold passages, the negatives, and (from RANDOM) random passages of the
same corpus; and the share of negatives that mention the question's key entity (its longest run of
capitalised words, or its longest word when it has none).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

from sklearn.feature_extraction.text import TfidfVectorizer

HEAD = re.compile(r"^Document \[(\d+)\](?: \(Title: ([^\n]*?)\))?: ", re.M)
CAPITALISED = re.compile(
    r"(?:[A-Z][\w'.-]*(?:\s+(?:of|the|de|la|and|in)\s+|\s+)?)+[A-Z][\w'.-]*|[A-Z][\w'.-]{3,}"
)


def passages(prompt: str) -> dict[int, str]:
    """The prompt's ``Document [n]`` blocks as {n: title + text}."""
    heads = list(HEAD.finditer(prompt))
    ends = [head.start() for head in heads[1:]] + [prompt.rindex("\n\nQuestion: ")]
    return {
        int(head.group(1)): f"{head.group(2) or ''} {prompt[head.end() : end]}"
        for head, end in zip(heads, ends)
    }


def key_entity(question: str) -> str:
    """The question's longest capitalised span (not its first word alone), else its longest word."""
    spans = [span.strip() for span in CAPITALISED.findall(question[1:] if question else "")]
    return max(spans, key=len) if spans else max(question.split(), key=len)


def measure(folder: Path) -> dict[str, dict[str, float]]:
    """Per length: mean cosine of question to gold and to negatives, and the share of negatives naming the key entity."""
    figures = {}
    for path in sorted((folder / "rag_hard").glob("*.jsonl"), key=lambda p: int(p.stem[:-1])):
        gold_sims, negative_sims, mentions = [], [], []
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            blocks = passages(record["prompt"])
            texts = list(blocks.values())
            vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit(
                texts + [record["question"]]
            )
            question = vectorizer.transform([record["question"]])
            similarity = dict(
                zip(blocks, (vectorizer.transform(texts) @ question.T).toarray().ravel())
            )
            gold = set(record["gold"]["passages"])
            gold_sims += [similarity[n] for n in gold]
            negatives = [n for n in blocks if n not in gold]
            negative_sims += [similarity[n] for n in negatives]
            entity = key_entity(record["question"]).lower()
            mentions += [entity in blocks[n].lower() for n in negatives]
        figures[path.stem] = {
            "gold": statistics.mean(gold_sims),
            "negatives": statistics.mean(negative_sims),
            "entity_share": statistics.mean(mentions),
        }
    return figures


def main(hard: Path, random_folder: Path) -> None:
    """Print the table."""
    hard_figures, random_figures = measure(hard), measure(random_folder)
    print(
        "| length | cosine to gold | to BM25 negatives | to random passages | negatives naming the key entity (BM25 / random) |"
    )
    print("|---|---:|---:|---:|---:|")
    for label, figures in hard_figures.items():
        other = random_figures[label]
        print(
            f"| {label} | {figures['gold']:.3f} | {figures['negatives']:.3f} | {other['negatives']:.3f} | "
            f"{figures['entity_share']:.1%} / {other['entity_share']:.1%} |"
        )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.splitlines()[2])
    main(Path(sys.argv[1]), Path(sys.argv[2]))
