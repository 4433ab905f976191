"""predict over several servers: throughput with 1, 2 and 3 servers of different speeds, and one dying mid-run.

Each stub server (``tests/support/openai_stub.py``, in this process) answers after a fixed delay standing for
model time: 20 ms (fast), 40 ms and 80 ms (slow). Requests go to the least busy server, so a faster
server takes more of them. The last run stops the fast server after 100 requests: it is dropped with one
line and its requests go to the others; every sample still gets its answer.

    .venv/bin/python bench/bench_predict_servers.py [--samples 600] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from longbench100.predict.options import PredictOptions  # noqa: E402
from longbench100.predict.run import run_predictions  # noqa: E402
from tests.support.openai_stub import DROP, OpenAIStub  # noqa: E402
from tests.support.predict_helpers import write_data  # noqa: E402

DELAYS_S = (0.02, 0.04, 0.08)


def slow(
    delay: float,
    count: list[int],
    stop_after: int | None = None,
    stopping: threading.Event | None = None,
):
    """A responder that answers after ``delay`` seconds and counts its requests."""

    def respond(body: dict):
        count.append(1)
        if stop_after is not None and len(count) >= stop_after and stopping is not None:
            stopping.set()  # dead from now on: hangs up on open connections, and the listener stops
            return DROP
        time.sleep(delay)
        return "42"

    return respond


def run(samples: int, concurrency: int, servers: int, kill_first: bool) -> None:
    counts: list[list[int]] = [[] for _ in range(servers)]
    stopping = threading.Event()
    stubs = [
        OpenAIStub(slow(delay, counts[index], 100 if kill_first and index == 0 else None, stopping))
        for index, delay in enumerate(DELAYS_S[:servers])
    ]
    with tempfile.TemporaryDirectory() as scratch:
        data = write_data(Path(scratch) / "data", {("kv_retrieval", "2k"): samples})
        for stub in stubs:
            stub.__enter__()
        try:
            options = PredictOptions(
                data_dir=data,
                out_dir=Path(scratch) / "pred",
                model=stubs[0].model,
                base_url=stubs[0].base_url,
                more_base_urls=tuple(s.base_url for s in stubs[1:]),
                concurrency=concurrency,
                progress=False,
            )
            if kill_first:
                threading.Thread(
                    target=lambda: (stopping.wait(), stubs[0].stop()), daemon=True
                ).start()
            started = time.perf_counter()
            summary = run_predictions(options)
            wall = time.perf_counter() - started
        finally:
            for stub in stubs:
                stub.stop()
    label = f"{servers} server{'s' if servers > 1 else ''}" + (
        " (fast one stopped after 100)" if kill_first else ""
    )
    shares = " / ".join(str(len(count)) for count in counts)
    print(
        f"| {label} | {wall:.1f} | {summary.done / wall:.0f} | {shares} | {summary.done}/{samples} | {sum(summary.failed.values())} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight per server")
    args = parser.parse_args()
    print(
        f"{args.samples} samples, --concurrency {args.concurrency} per server, server delays {DELAYS_S} s"
    )
    print(
        "| servers | wall s | samples/s | requests per server (20/40/80 ms) | answered | failed |"
    )
    print("|---|---:|---:|---|---:|---:|")
    for servers in (1, 2, 3):
        run(args.samples, args.concurrency, servers, False)
    run(args.samples, args.concurrency, 3, True)


if __name__ == "__main__":
    main()
