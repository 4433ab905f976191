"""Offline stand-in for the paper's ``utils/utils.py`` (100-LongBench), put in before its code runs.

paper_driver.py puts this module at ``sys.modules["utils.utils"]`` and calls ``install()``, so the
paper's own task code (``utils/data_utils.py``) runs unchanged, with three substitutions:

* ``transformers.AutoTokenizer.from_pretrained`` gives tiktoken's cl100k_base (``encode`` is
  ``encode_ordinary``), the tokenizer ours is timed with; the paper asks for Llama-2's, which
  needs the hub.
* ``datasets.load_dataset`` reads the source mirror (hub layout, folder in LB100_SOURCES) and
  re-reads the file on every call, as the paper's streaming loads fetch again on every call.
  LongBench sets that the mirror lacks are made from L-Eval documents in LongBench's record
  format (one row per question); 2wikimqa has no stand-in and is empty.
* The original's torch seeding and hub login are left out: generation uses neither.
"""

from __future__ import annotations

import io
import json
import os
import random
import zipfile
from typing import Any

import numpy as np

project_dir = "./"
cache_dir = "./cache"
token = None
api_keys: dict[str, Any] = {"openai": None}

LEVAL_FOLDER = "L4NLP/LEval/LEval/Generation"
LONGBENCH_ARCHIVE = "THUDM/LongBench/data.zip"
# LongBench set -> (L-Eval file standing in for it, whether its questions are kept as `input`)
LONGBENCH_STAND_INS = {
    "qasper": ("paper_assistant", True),
    "multifieldqa_en": ("news_summ", True),
    "narrativeqa": ("tv_show_summ", True),
    "gov_report": ("gov_report_summ", False),
    "multi_news_e": ("news_summ", False),
}
LONGBENCH_ABSENT = {"2wikimqa"}


def set_global_path(path: str) -> str:
    """As the original: a path under the project folder."""
    return os.path.join(project_dir, path)


def seed_everything(seed: int) -> None:
    """Seed what generation draws from (``random`` and numpy)."""
    np.random.seed(seed)
    random.seed(seed)


def logger(text: str) -> None:
    """As the original: print."""
    print(text)


def _mirror(path: str) -> str:
    return os.path.join(os.environ["LB100_SOURCES"], path)


def _jsonl(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _parquet(path: str) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def _leval(name: str) -> list[dict[str, Any]]:
    return _jsonl(_mirror(os.path.join(LEVAL_FOLDER, f"{name}.jsonl")))


def _longbench_from_leval(name: str) -> list[dict[str, Any]]:
    leval, keep_question = LONGBENCH_STAND_INS[name]
    rows: list[dict[str, Any]] = []
    for document in _leval(leval):
        for question, answer in zip(document["instructions"], document["outputs"]):
            rows.append(
                {
                    "input": question if keep_question else "",
                    "context": document["input"],
                    "answers": [answer],
                    "length": len(document["input"].split()),
                    "dataset": name,
                    "language": "en",
                    "all_classes": None,
                    "_id": f"{leval}-{len(rows)}",
                }
            )
    return rows


def _longbench(name: str) -> list[dict[str, Any]]:
    if name in LONGBENCH_ABSENT:
        return []
    if name in LONGBENCH_STAND_INS:
        return _longbench_from_leval(name)
    with zipfile.ZipFile(_mirror(LONGBENCH_ARCHIVE)) as archive:
        with archive.open(f"data/{name}.jsonl") as member:
            lines = io.TextIOWrapper(member, encoding="utf-8")
            return [json.loads(line) for line in lines if line.strip()]


def load_dataset(path: str, name: str | None = None, **_: Any) -> list[dict[str, Any]]:
    """The paper's load_dataset calls, answered from the mirror (a list, iterable twice)."""
    if path == "THUDM/LongBench" and name:
        return _longbench(name)
    if path == "L4NLP/LEval" and name:
        return _leval(name)
    if path in ("abisee/cnn_dailymail", "enelpol/rag-mini-bioasq") and name:
        return _parquet(_mirror(os.path.join(path, name, "test-00000-of-00001.parquet")))
    raise ValueError(f"paper_shim: no mirror file for load_dataset({path!r}, name={name!r})")


class Cl100kTokenizer:
    """The part of a transformers tokenizer the paper uses: encode and decode."""

    def __init__(self) -> None:
        import tiktoken

        self._encoding = tiktoken.get_encoding("cl100k_base")

    def encode(self, text: str, **_: Any) -> list[int]:
        """Token ids of ``text`` (no special tokens)."""
        return self._encoding.encode_ordinary(text)

    def decode(self, ids: list[int], **_: Any) -> str:
        """Text of ``ids``."""
        return self._encoding.decode(list(ids))


def _cl100k_tokenizer(*_: Any, **__: Any) -> Cl100kTokenizer:
    return Cl100kTokenizer()


def install() -> None:
    """Patch the tokenizer and dataset loaders before the paper's code imports them."""
    import datasets
    import transformers

    # the paper's own code is left as it is, so its tokenizer and loader are swapped in place
    loader = staticmethod(_cl100k_tokenizer)
    transformers.AutoTokenizer.from_pretrained = loader  # type: ignore[method-assign,assignment]
    datasets.load_dataset = load_dataset
