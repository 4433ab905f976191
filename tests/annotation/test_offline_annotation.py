"""bench/offline_annotation.py: the requests recorded by one run, answered by replies written elsewhere and
replayed, give generate exactly those labels (the record -> infer -> replay route of docs/local-model.md)."""

import io
import json

from tests.support.bench_scripts import load_bench_script
from tests.support.generate_helpers import tree
from tests.support.openai_stub import OpenAIStub
from tests.tasks.test_one_document import annotator, run


def load_script():
    """The bench script as a module."""
    return load_bench_script("offline_annotation")


def test_recorded_requests_replayed_give_generate_the_same_labels(mirror, tmp_path, monkeypatch):
    offline = load_script()
    args = (
        "--suite",
        "ethic",
        "--tasks",
        "organizing,recalling",
        "--sources",
        str(mirror),
        "--rows",
        "2",
        "--lengths",
        "4k,8k",
        "--annotator-model",
        "offline-model",
        "--workers",
        "1",
    )
    recorded = io.StringIO()
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "recording-cache"))
    with OpenAIStub(offline.recording_responder(recorded)) as server:
        code, output = run(
            *args, "--out", str(tmp_path / "recorded"), "--annotator-base-url", server.base_url
        )
    assert code == 0, output
    requests = [json.loads(line) for line in recorded.getvalue().splitlines()]
    assert (
        len({request["key"] for request in requests}) == len(requests) == len(server.requests)
    )  # each distinct once

    # the "model": the test annotator's label for each recorded request, as infer would write it
    replies = {}
    for request in requests:
        text = annotator({"messages": request["messages"]})
        replies[request["key"]] = {
            "key": request["key"],
            "text": text,
            "prompt_tokens": 1000,
            "completion_tokens": len(text.split()),
            "finish_reason": "stop",
        }
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "replay-cache"))
    with OpenAIStub(offline.replay_responder(replies, "offline-model")) as replay:
        code, output = run(
            *args, "--out", str(tmp_path / "replayed"), "--annotator-base-url", replay.base_url
        )
    assert code == 0, output
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "direct-cache"))
    with OpenAIStub(annotator) as direct:
        code, output = run(
            *args, "--out", str(tmp_path / "direct"), "--annotator-base-url", direct.base_url
        )
    assert code == 0, output
    assert tree(tmp_path / "replayed", skip=("manifest.json",)) == tree(
        tmp_path / "direct", skip=("manifest.json",)
    )


def test_a_request_that_was_not_recorded_is_refused_and_the_run_stops(
    mirror, tmp_path, monkeypatch
):
    offline = load_script()
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    preflight = {
        "messages": [{"role": "user", "content": "Reply with the single word OK."}],
        "max_tokens": 16,
    }
    key = offline.request_key(preflight["messages"], preflight["max_tokens"])
    replies = {
        key: {
            "key": key,
            "text": "OK",
            "prompt_tokens": 9,
            "completion_tokens": 1,
            "finish_reason": "stop",
        }
    }
    responder = offline.replay_responder(replies, "offline-model")
    status, body = responder(preflight)
    assert (
        status == 200
        and body["choices"][0]["message"]["content"] == "OK"
        and body["usage"]["total_tokens"] == 10
    )
    assert responder({**preflight, "max_tokens": 17})[0] == 400
    with OpenAIStub(responder) as replay:
        code, output = run(
            "--suite",
            "ethic",
            "--tasks",
            "organizing",
            "--sources",
            str(mirror),
            "--rows",
            "1",
            "--lengths",
            "4k",
            "--out",
            str(tmp_path / "out"),
            "--annotator-model",
            "offline-model",
            "--annotator-base-url",
            replay.base_url,
        )
    assert code != 0 and "got no usable label" in output and "Traceback" not in output
    assert not list((tmp_path / "out").glob("*/*.jsonl"))


def test_a_second_ask_with_a_penalty_is_its_own_request():
    offline = load_script()
    messages = [{"role": "user", "content": "Summarise <passage>\nSome text.\n</passage>"}]
    plain, penalised = (
        {"messages": messages, "max_tokens": 40},
        {"messages": messages, "max_tokens": 40, "frequency_penalty": 1.0},
    )
    assert offline.body_key(plain) == offline.request_key(
        messages, 40
    )  # keys recorded before penalties stay valid
    assert offline.body_key(penalised) != offline.body_key(plain)
    recorded = io.StringIO()
    responder = offline.recording_responder(recorded)
    responder(plain)
    responder(penalised)
    requests = [json.loads(line) for line in recorded.getvalue().splitlines()]
    assert [request.get("frequency_penalty") for request in requests] == [None, 1.0]
    replies = {
        request["key"]: {
            "key": request["key"],
            "text": "looped" if "frequency_penalty" not in request else "Some text.",
            "prompt_tokens": 9,
            "completion_tokens": 1,
            "finish_reason": "stop",
        }
        for request in requests
    }
    replay = offline.replay_responder(replies, "offline-model")
    assert replay(plain)[1]["choices"][0]["message"]["content"] == "looped"
    assert replay(penalised)[1]["choices"][0]["message"]["content"] == "Some text."


def test_the_replay_keeps_the_requests_it_cannot_answer_for_another_round(mirror, tmp_path):
    offline = load_script()
    messages = [{"role": "user", "content": "Summarise <passage>\nSome text.\n</passage>"}]
    answered = {"messages": messages, "max_tokens": 40}
    key = offline.body_key(answered)
    missing = io.StringIO()
    replay = offline.replay_responder(
        {
            key: {
                "key": key,
                "text": "and and and",
                "prompt_tokens": 9,
                "completion_tokens": 40,
                "finish_reason": "length",
            }
        },
        "offline-model",
        missing,
    )
    assert replay(answered)[0] == 200
    second = {**answered, "frequency_penalty": 1.0}
    assert replay(second)[0] == 400 and replay(second)[0] == 400
    kept = [json.loads(line) for line in missing.getvalue().splitlines()]
    assert kept == [
        {
            "key": offline.body_key(second),
            "messages": messages,
            "max_tokens": 40,
            "frequency_penalty": 1.0,
        }
    ]
    first_file, second_file = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first_file.write_text(json.dumps({"key": key, "text": "one"}) + "\n")
    second_file.write_text(
        json.dumps({"key": key, "text": "two"})
        + "\n"
        + json.dumps({"key": "other", "text": "x"})
        + "\n"
    )
    assert {k: r["text"] for k, r in offline.read_replies(first_file, second_file).items()} == {
        key: "two",
        "other": "x",
    }


def test_stand_in_summary_reads_the_whole_chunk_and_no_part_of_it_more_than_another():
    offline = load_script()
    sentences = [
        "The morning was cold when Alice met Bernard at the harbour.",
        "They spoke of the harbour and the voyage, and Carla listened.",
        "Later Dmitri arrived with letters about the voyage and the harbour.",
        "The captain told Carla that Bernard would sail before Edith woke.",
    ]
    summary = offline.stand_in_summary(" ".join(sentences))
    names, topics = summary.rstrip(".").split(": ")
    assert names == "Bernard, Carla, Alice"  # twice each first, then ties alphabetically
    assert topics.split(", ")[0] == "harbour" and "The" not in summary
    for order in ([3, 2, 1, 0], [2, 0, 3, 1]):  # where a name stands plays no part
        assert offline.stand_in_summary(" ".join(sentences[i] for i in order)) == summary


def test_stand_in_summary_of_a_text_in_capitals_still_names_its_topics():
    offline = load_script()
    summary = offline.stand_in_summary(
        "CONFIDENTIALITY.....30 INDEMNIFICATION.....34 TERMINATION.....37"
    )
    assert summary == "confidentiality, indemnification, termination."
