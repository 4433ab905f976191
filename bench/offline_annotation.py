"""Annotate with a real model on a GPU machine that no server can reach: record, infer, replay.

The annotator step of ``generate`` talks to an OpenAI-compatible server. Where the only GPU at hand is a
machine without network access (and without vLLM), this script splits the run in three:

1. ``record``: here, a model-free stand-in server answers ``generate`` with plausible labels and records
   every distinct request (its messages and reply budget) to a JSONL file. Use a throwaway
   ``LONGBENCH100_CACHE`` for this run: its labels are not the model's. Record more rows than you will
   generate, so documents chosen in place of a dropped row are covered too.
2. ``infer``: on the GPU machine, the model (a GGUF file, read by ``transformers``) answers every recorded
   request with greedy decoding, in batches, applying its own chat template, as a server would.
3. ``serve``: here again, a server answers ``generate`` with exactly those replies (token usage and
   ``finish_reason`` as the model produced them); a request that was not recorded is refused with an error,
   so the run stops loudly instead of inventing a label. ``--missing`` keeps those requests: the second
   asks (with a frequency penalty) of replies that looped to the budget, which the recording run could not
   foresee. ``infer`` them too and serve both reply files.

Usage::

    python bench/offline_annotation.py record --port 8766 --out requests.jsonl &
    LONGBENCH100_CACHE=throwaway-cache longbench100 generate --suite ethic ... --annotator-model smollm2 \
        --annotator-base-url http://127.0.0.1:8766/v1
    python bench/offline_annotation.py infer --model SmolLM2-135M-Instruct.Q4_1.gguf --requests requests.jsonl \
        --out replies.jsonl                                   # on the GPU machine
    python bench/offline_annotation.py serve --port 8767 --replies replies.jsonl --missing second.jsonl &
    longbench100 generate --suite ethic ... --annotator-model smollm2 --annotator-base-url http://127.0.0.1:8767/v1
    # if it stopped on chunks without a label and second.jsonl is not empty: infer second.jsonl into
    # second_replies.jsonl on the GPU machine, serve --replies replies.jsonl second_replies.jsonl, run again
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PASSAGE = re.compile(r"<passage>\n(.*)\n</passage>", re.DOTALL)
REFERENCE = re.compile(
    r"\b(?:(?:Section|Article|Exhibit|Schedule|Appendix|Clause)s? [0-9A-Z][0-9.()a-z]*"
    r"|[A-Z][A-Za-z ]{2,40} Act(?: of \d{4})?)"
)
PERSON = re.compile(r"\b(?:Mr\.|Mrs\.|Miss|Dr\.)? ?[A-Z][a-z]+ [A-Z][a-z]+\b")


def request_key(
    messages: list[dict], max_tokens: int | None, frequency_penalty: float | None = None
) -> str:
    """The sha256 naming one request: its messages, reply budget and frequency penalty, where one is asked (the
    rest of a body does not change a reply)."""
    named = [messages, max_tokens] + (
        [{"frequency_penalty": frequency_penalty}] if frequency_penalty else []
    )
    return hashlib.sha256(
        json.dumps(named, ensure_ascii=False, sort_keys=True).encode()
    ).hexdigest()


def body_key(body: dict) -> str:
    """:func:`request_key` of a request body."""
    return request_key(body["messages"], body.get("max_tokens"), body.get("frequency_penalty"))


CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}\b")
INSIDE_A_SENTENCE = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]{2,}\b")
LOWER_CASE_WORD = re.compile(r"\b[a-z]+\b")
TOPIC_WORD = re.compile(r"\b[a-z]{6,}\b")
COMMON_LONG_WORDS = frozenset(
    "should little before though without himself herself itself nothing always through another "
    "because between whether against something believe myself yourself anything everything "
    "thought rather almost enough perhaps towards toward upon cannot hardly indeed".split()
)
"""Long words that every text uses often, which say nothing of what a passage is about."""
SUMMARY_NAMES = 3
SUMMARY_TOPICS = 5


def most_frequent(words: list[str], limit: int) -> list[str]:
    """The ``limit`` most frequent of ``words``, ties in alphabetical order: where in the text a
    word stands plays no part (a passage's opening is no likelier to be named than its end)."""
    counts = Counter(words)
    return sorted(counts, key=lambda word: (-counts[word], word))[:limit]


def stand_in_summary(chunk: str) -> str:
    """A model-free summary of the whole chunk: its most frequent names (capitalised words it writes
    inside a sentence and never in lower case, so not a sentence's first "The"), then its most
    frequent long words. It reads nothing but the chunk, and no part of it more than another."""
    lower_case = set(LOWER_CASE_WORD.findall(chunk))
    named = set(INSIDE_A_SENTENCE.findall(chunk))
    names = [
        word
        for word in CAPITALISED.findall(chunk)
        if word in named and word.lower() not in lower_case
    ]
    topics = [word for word in TOPIC_WORD.findall(chunk) if word not in COMMON_LONG_WORDS] or [
        word for word in TOPIC_WORD.findall(chunk.lower()) if word not in COMMON_LONG_WORDS
    ]  # a passage written in capitals (a contract's table of contents) still has its topics
    parts = [
        ", ".join(most_frequent(names, SUMMARY_NAMES)),
        ", ".join(most_frequent(topics, SUMMARY_TOPICS)),
    ]
    return ": ".join(part for part in parts if part) + "."


def stand_in_label(prompt: str) -> str:
    """A model-free label for the recording run: capitalised runs as names or references, the
    chunk's most frequent names and long words as a summary (:func:`stand_in_summary`)."""
    match = PASSAGE.search(prompt)
    if match is None:
        return "OK"
    chunk = match.group(1)
    if "legal reference" in prompt:
        return (
            "; ".join(dict.fromkeys(found.strip() for found in REFERENCE.findall(chunk))) or "NONE"
        )
    if "List every person" in prompt:
        return "; ".join(dict.fromkeys(found.strip() for found in PERSON.findall(chunk))) or "NONE"
    return stand_in_summary(chunk)


def request_writer(out: TextIO) -> Callable[[dict], None]:
    """A function that appends each distinct request body it is given to ``out`` as one JSON line (key, messages,
    reply budget and frequency penalty, where one is asked): what ``infer`` reads."""
    seen: set[str] = set()
    lock = threading.Lock()

    def write(body: dict) -> None:
        key = body_key(body)
        with lock:
            if key not in seen:
                seen.add(key)
                penalty = (
                    {"frequency_penalty": body["frequency_penalty"]}
                    if body.get("frequency_penalty")
                    else {}
                )
                out.write(
                    json.dumps(
                        {
                            "key": key,
                            "messages": body["messages"],
                            "max_tokens": body.get("max_tokens"),
                            **penalty,
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
                out.flush()

    return write


def recording_responder(out: TextIO) -> Callable[[dict], str]:
    """A server responder that answers with :func:`stand_in_label` and appends each distinct request to ``out``."""
    write = request_writer(out)

    def responder(body: dict) -> str:
        write(body)
        return stand_in_label(
            "\n".join(str(message.get("content", "")) for message in body["messages"])
        )

    return responder


def record(args: argparse.Namespace) -> None:
    """Serve stand-in labels and append every distinct request to ``--out`` until interrupted."""
    from tests.support.openai_stub import OpenAIStub

    with (
        open(args.out, "a", encoding="utf-8") as out,
        OpenAIStub(recording_responder(out), model=args.model, port=args.port) as server,
    ):
        print("recording at", server.base_url, flush=True)
        while True:
            time.sleep(3600)


def infer(args: argparse.Namespace) -> None:
    """Answer every recorded request with the model (greedy), longest prompts first, in batches; write JSONL."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessorList

    model_path = Path(args.model)
    tokenizer = AutoTokenizer.from_pretrained(model_path.parent, gguf_file=model_path.name)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        model_path.parent, gguf_file=model_path.name, dtype=getattr(torch, args.dtype)
    )
    model = model.to("cuda" if torch.cuda.is_available() else "cpu").eval()
    requests = [json.loads(line) for line in open(args.requests, encoding="utf-8")]
    done = (
        {json.loads(line)["key"] for line in open(args.out, encoding="utf-8")}
        if Path(args.out).exists()
        else set()
    )
    pending = list(
        {request["key"]: request for request in requests if request["key"] not in done}.values()
    )  # each once
    encoded = [
        tokenizer.apply_chat_template(
            request["messages"], add_generation_prompt=True, tokenize=True
        )
        for request in pending
    ]
    encoded = [
        ids["input_ids"] if hasattr(ids, "keys") else ids for ids in encoded
    ]  # a BatchEncoding, or the ids
    stops = end_of_turn_ids(model, tokenizer)
    penalty_of = [pending[index].get("frequency_penalty") or 0.0 for index in range(len(pending))]
    order = sorted(
        range(len(pending)),
        key=lambda index: (
            penalty_of[index],
            -len(encoded[index]),
            pending[index]["max_tokens"] or 0,
        ),
    )
    batches = [
        batch
        for penalty in sorted(set(penalty_of))
        for batch in _batched(
            [index for index in order if penalty_of[index] == penalty], args.batch
        )
    ]
    started = time.perf_counter()
    with open(args.out, "a", encoding="utf-8") as out:
        for number, batch in enumerate(batches):
            budget = max(pending[index]["max_tokens"] or args.default_max_tokens for index in batch)
            inputs = tokenizer.pad(
                {"input_ids": [encoded[index] for index in batch]}, return_tensors="pt"
            ).to(model.device)
            penalty = penalty_of[batch[0]]
            processors = LogitsProcessorList(
                [frequency_penalty_processor(penalty, inputs["input_ids"].shape[1])]
                if penalty
                else []
            )
            with torch.inference_mode():
                output = model.generate(
                    **inputs,
                    max_new_tokens=budget,
                    do_sample=False,
                    pad_token_id=tokenizer.pad_token_id,
                    logits_processor=processors,
                )
            for row, index in enumerate(batch):
                limit = pending[index]["max_tokens"] or args.default_max_tokens
                new = output[row, inputs["input_ids"].shape[1] :].tolist()
                stop = next((at for at, token in enumerate(new) if token in stops), None)
                finish = "stop" if stop is not None and stop < limit else "length"
                kept = new[:stop] if finish == "stop" else new[:limit]
                out.write(
                    json.dumps(
                        {
                            "key": pending[index]["key"],
                            "text": tokenizer.decode(kept, skip_special_tokens=True),
                            "prompt_tokens": len(encoded[index]),
                            "completion_tokens": len(kept),
                            "finish_reason": finish,
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
            out.flush()
            print(
                f"batch {number + 1}/{len(batches)} ({len(batch)} requests, frequency penalty {penalty}) "
                f"in {time.perf_counter() - started:.0f} s",
                flush=True,
            )


def _batched(indices: list[int], size: int) -> list[list[int]]:
    """``indices`` in runs of at most ``size``."""
    return [indices[start : start + size] for start in range(0, len(indices), size)]


def frequency_penalty_processor(penalty: float, prompt_length: int):
    """A transformers logits processor with OpenAI's ``frequency_penalty``: each token's logit lowered by ``penalty``
    times the number of times the reply so far holds it (tokens after the first ``prompt_length`` of each row)."""
    import torch

    def lower(input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        generated = input_ids[:, prompt_length:]
        counts = torch.zeros_like(scores).scatter_add_(
            1, generated, torch.ones_like(generated, dtype=scores.dtype)
        )
        return scores - penalty * counts

    return lower


def end_of_turn_ids(model, tokenizer) -> set[int]:
    """The token ids that end a reply: the model's configured end tokens and the tokenizer's."""
    configured = model.generation_config.eos_token_id
    return set(configured if isinstance(configured, list) else [configured]) | {
        tokenizer.eos_token_id
    }


def replay_responder(
    replies: dict[str, dict], model: str, missing: TextIO | None = None
) -> Callable[[dict], tuple[int, dict]]:
    """A server responder answering each request with its recorded reply (by :func:`request_key`), with the
    model's token usage and ``finish_reason``; a request that was not recorded gets HTTP 400 (and is appended
    to ``missing``, for ``infer``: the second asks of replies that looped, which no recording run can foresee)."""
    write_missing = request_writer(missing) if missing is not None else None

    def responder(body: dict) -> tuple[int, dict]:
        reply = replies.get(body_key(body))
        if reply is None:
            if write_missing is not None:
                write_missing(body)
            return 400, {
                "error": {
                    "message": "this request was not recorded for the offline model",
                    "type": "BadRequestError",
                }
            }
        usage = {
            "prompt_tokens": reply["prompt_tokens"],
            "completion_tokens": reply["completion_tokens"],
            "total_tokens": reply["prompt_tokens"] + reply["completion_tokens"],
        }
        return 200, {
            "id": "offline-" + reply["key"][:12],
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply["text"]},
                    "finish_reason": reply["finish_reason"],
                }
            ],
            "usage": usage,
        }

    return responder


def read_replies(*paths: str | Path) -> dict[str, dict]:
    """The replies of ``infer`` output files, by request key."""
    replies: dict[str, dict] = {}
    for path in paths:
        with open(path, encoding="utf-8") as lines:
            replies.update((reply["key"], reply) for reply in map(json.loads, lines))
    return replies


def serve(args: argparse.Namespace) -> None:
    """Answer each request with the model's recorded reply; refuse a request that was not recorded."""
    from tests.support.openai_stub import OpenAIStub

    replies = read_replies(*args.replies)
    with (
        open(args.missing or "/dev/null", "a", encoding="utf-8") as missing,
        OpenAIStub(
            replay_responder(replies, args.model, missing if args.missing else None),
            model=args.model,
            port=args.port,
        ) as server,
    ):
        print(f"replaying {len(replies)} replies at", server.base_url, flush=True)
        while True:
            time.sleep(3600)


def main() -> None:
    """Parse the subcommand and run it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    recorder = commands.add_parser("record", help="serve stand-in labels and record the requests")
    recorder.add_argument("--port", type=int, default=8766)
    recorder.add_argument("--out", required=True)
    recorder.add_argument("--model", default="smollm2")
    inference = commands.add_parser(
        "infer", help="answer the recorded requests with a GGUF model (GPU machine)"
    )
    inference.add_argument("--model", required=True, help="path of the .gguf file")
    inference.add_argument("--requests", required=True)
    inference.add_argument("--out", required=True)
    inference.add_argument("--batch", type=int, default=128)
    inference.add_argument("--dtype", default="float32")
    inference.add_argument("--default-max-tokens", type=int, default=400)
    replay = commands.add_parser(
        "serve", help="replay the model's replies as an OpenAI-compatible server"
    )
    replay.add_argument("--port", type=int, default=8767)
    replay.add_argument(
        "--replies", required=True, nargs="+", help="infer output files (later ones win)"
    )
    replay.add_argument(
        "--missing", help="append each request that has no reply here (for another infer round)"
    )
    replay.add_argument("--model", default="smollm2")
    args = parser.parse_args()
    {"record": record, "infer": infer, "serve": serve}[args.command](args)


if __name__ == "__main__":
    main()
