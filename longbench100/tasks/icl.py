"""HELMET's in-context learning with label mapping: four classification tasks sharing one mechanism.

A sample renames its dataset's classes to the integers ``0..n-1`` in a random order (its mapping), so
the model must learn from the demonstrations which number stands for which class instead of using
what it knows about the class names. Demonstrations come from the train split in rounds: one example
of every class per round, in a random order within the round. Rounds are added until the budget is
full; the last round may be partial (the count of demonstrations is the largest that fits), but the
first round is always complete, so the asked text's class is always shown. The asked text comes from
the test split and never appears among the demonstrations.

Row ``r`` asks about the test text of class ``r mod m`` (``m``: the classes with test texts), so rows
are label-balanced; its mapping, its test text and its sequence of rounds depend only on (seed, task,
row), so a longer length shows the same rounds and adds more. Rows get different mappings (as long as
the classes allow that many orders).
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field

from longbench100.core.errors import UserError
from longbench100.fitting.fit import BuildContext
from longbench100.fitting.rng import derive_rng
from longbench100.fitting.spans import coverage_spans
from longbench100.fitting.templates import PromptTemplates
from longbench100.sources.corpus import Corpus
from longbench100.sources.records import Item

from .base import Candidate, Sample, TaskBuilder
from .haystack import fit_haystack, repeated

DEMONSTRATION = "text: {text}\nlabel: {label}"  # one demonstration; the template ends with the asked text in the same form
SEPARATOR = "\n\n"
TRAIN_SPLIT = "train"
TEST_SPLIT = "test"
MIN_DEMONSTRATION_TOKENS = 4  # a demonstration and its separator take more tokens than this
_LABEL_LINE = re.compile(r"^label: \d+$", re.MULTILINE)  # a demonstration's label line


@dataclass
class MappingDraws:
    """The distinct label mappings drawn so far for one seed (row ``r`` takes the ``r``-th), and the generator that draws more."""

    rng: random.Random
    found: list[tuple[int, ...]] = field(default_factory=list)
    seen: set[tuple[int, ...]] = field(default_factory=set)


@dataclass(frozen=True)
class IclRow:
    """What row ``r`` asks at every length: the test item, the mapping, and its demonstrations in order (rounds back to back)."""

    test: Item
    mapping: dict[str, int]
    demonstrations: list[Item]
    round_size: int


def normalized(text: str) -> str:
    """``text`` compared case- and spacing-insensitively (the test text must not reappear as a demonstration)."""
    return " ".join(text.split()).casefold()


class IclTask(TaskBuilder):
    """An ICL task: subclasses set ``name``; the task's ``real`` sources give train and test items."""

    required_roles = ("real",)
    chooses_own_items = True

    def __init__(self, corpus: Corpus, templates: PromptTemplates) -> None:
        super().__init__(corpus, templates)
        sources = corpus.sources_with_role(self.name, "real")
        items = [item for item in corpus.items_of(sources) if item.kind == "classification"]
        self.train: dict[str, list[Item]] = {}
        for item in items:
            if item.split == TRAIN_SPLIT:
                self.train.setdefault(item.class_label, []).append(item)
        self.labels = sorted(self.train)
        self.tests: dict[str, list[Item]] = {}
        for item in items:
            if item.split == TEST_SPLIT and item.label in self.train:
                self.tests.setdefault(item.label, []).append(item)
        self.test_labels = [label for label in self.labels if label in self.tests]
        if not self.test_labels:
            raise UserError(
                f"task {self.name}: its sources ({', '.join(sources)}) hold no {TEST_SPLIT} items of a class with {TRAIN_SPLIT} items"
            )
        self._mappings: dict[int, MappingDraws] = {}

    def mapping(self, seed: int, row: int) -> dict[str, int]:
        """Row ``row``'s mapping of class names to the integers ``0..n-1``: different rows get different ones
        (while the ``n!`` orders last; then they repeat in turn)."""
        draws = self._mappings.setdefault(
            seed, MappingDraws(derive_rng(seed, self.name, "mappings"))
        )
        wanted = min(row + 1, math.factorial(len(self.labels)))
        while len(draws.found) < wanted:
            order = list(range(len(self.labels)))
            draws.rng.shuffle(order)
            if tuple(order) not in draws.seen:
                draws.seen.add(tuple(order))
                draws.found.append(tuple(order))
        return dict(zip(self.labels, draws.found[row % len(draws.found)]))

    def test_item(self, seed: int, row: int) -> Item:
        """Row ``row``'s test item: class ``row mod m`` in turn, and within it the next item of a seeded order."""
        label = self.test_labels[row % len(self.test_labels)]
        pool = list(self.tests[label])
        derive_rng(seed, self.name, "test", label).shuffle(pool)
        return pool[(row // len(self.test_labels)) % len(pool)]

    def row(self, seed: int, row: int, budget: int) -> IclRow:
        """Row ``row``'s test item, mapping and enough rounds of demonstrations to overfill ``budget``.

        Each class's train examples (less any whose text is the test text) are taken in a seeded order,
        one per round, starting over when a class runs out; the rounds are drawn one after another
        from the row's generator, so a larger budget only appends rounds.
        """
        test = self.test_item(seed, row)
        rng = derive_rng(seed, self.name, "row", row)
        excluded = normalized(test.question or "")
        examples: dict[str, list[Item]] = {}
        for label in self.labels:
            kept = [
                item for item in self.train[label] if normalized(item.question or "") != excluded
            ]
            rng.shuffle(kept)
            if kept:
                examples[label] = kept
        rounds = budget // (MIN_DEMONSTRATION_TOKENS * max(1, len(examples))) + 1
        demonstrations: list[Item] = []
        for number in range(rounds):
            one_round = [examples[label][number % len(examples[label])] for label in examples]
            rng.shuffle(one_round)
            demonstrations.extend(one_round)
        return IclRow(test, self.mapping(seed, row), demonstrations, len(examples))

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """The most demonstrations that fit the budget (at least one whole round), then the test text."""
        plan = self.row(ctx.seed, row, ctx.budget)
        units = [
            DEMONSTRATION.format(text=item.question, label=plan.mapping[item.class_label])
            for item in plan.demonstrations
        ]
        haystack = repeated(iter(units), len(units), SEPARATOR)

        fit = fit_haystack(
            ctx,
            haystack,
            [],
            lambda demonstrations: self.templates.render(
                self.name, {"demonstrations": demonstrations, "text": plan.test.question}
            ),
            SEPARATOR,
        )
        if fit is None:
            return None
        fitted_prompt, count = fit.fitted, fit.count
        shown = plan.demonstrations[:count]
        per_label = Counter(item.class_label for item in shown)
        if count < plan.round_size or not per_label[plan.test.class_label]:
            return None
        mapped = plan.mapping[plan.test.class_label]
        gold = {
            "sources": [plan.test.source],
            "item_ids": [plan.test.id],
            "passages": [],
            "label": plan.test.label,
            "mapped_label": mapped,
            "mapping": plan.mapping,
            "demonstrations": count,
            "rounds": count // plan.round_size,
            "partial_round": count % plan.round_size,
            "demonstrations_per_label": {label: per_label[label] for label in self.labels},
            "demonstration_ids": [item.id for item in shown],
            "demonstration_repeats": count
            - len(
                {item.id for item in shown}
            ),  # > 0: a class ran out of train examples and started over
            "spans": coverage_spans(
                fitted_prompt.prompt,
                units[:count],
                [item.label == plan.test.label for item in shown],
            ),
        }
        return Sample(fitted_prompt, [str(mapped)], plan.test.question, gold)


def relabelled_demonstrations(context: str, labels: int, rng: random.Random) -> str:
    """``context`` (demonstrations in :data:`DEMONSTRATION` form) with every demonstration's label
    replaced by one of ``0..labels-1`` drawn at random: the texts stay, the mapping is gone, and no
    label is kept from or kept out of the demonstrations by the class it stood for."""
    return _LABEL_LINE.sub(lambda _: f"label: {rng.randrange(labels)}", context)


def icl_task(name: str) -> type[IclTask]:
    """An :class:`IclTask` subclass named ``name``."""
    return type(
        name.title().replace("_", ""), (IclTask,), {"name": name, "__doc__": f"HELMET's {name}."}
    )


ICL_TASKS: tuple[type[IclTask], ...] = tuple(
    icl_task(name) for name in ("icl_trec_coarse", "icl_trec_fine", "icl_banking77", "icl_clinc150")
)
