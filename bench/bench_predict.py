"""Throughput and client overhead of the prediction runner against a local server that answers instantly.

Starts ``tests/support/openai_stub.py`` in a separate process (so its CPU time is not counted as the
client's), then for each concurrency level measures

- ``LLMClient``: ``complete()`` calls alone;
- ``predict``: the whole runner (index a data folder, send, append records to the store).

Client overhead per request is the client process's CPU time divided by the number of requests; at
concurrency 1 the wall time per request is the round trip (client + stub server + loopback). The stub
is a Python ``ThreadingHTTPServer``, so requests/s at high concurrency are bounded by the server,
not the client. Usage: ``.venv/bin/python bench/bench_predict.py [--requests 2000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from longbench100.llm.client import LLMClient  # noqa: E402
from longbench100.predict.options import PredictOptions  # noqa: E402
from longbench100.predict.run import run_predictions  # noqa: E402
from tests.support.predict_helpers import write_data  # noqa: E402


def start_server() -> tuple[subprocess.Popen, str]:
    """Start the stub server in its own process and return it with its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_stub", "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline().strip()
    if not line.startswith("serving on "):
        process.kill()
        raise RuntimeError(f"stub server did not start: {line!r}")
    return process, line.removeprefix("serving on ")


async def _client_run(base_url: str, requests: int, concurrency: int) -> None:
    """Send ``requests`` prompts through one LLMClient."""
    async with LLMClient(base_url, "stub-model", concurrency=concurrency) as client:
        results = await asyncio.gather(
            *(client.complete(f"prompt {i}", max_tokens=8) for i in range(requests))
        )
    failed = [result.error for result in results if result.error]
    if failed:
        raise RuntimeError(f"{len(failed)} requests failed, e.g. {failed[0]}")


def process_cpu_s(pid: int) -> float:
    """Return the CPU time (user + system) a process has used so far, from /proc (Linux), else NaN."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(action, requests: int, server_pid: int) -> tuple[float, float, float, float]:
    """Run ``action()``; return requests/s, then wall, client CPU and server CPU in ms per request."""
    wall, cpu, server_cpu = time.perf_counter(), time.process_time(), process_cpu_s(server_pid)
    action()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    server_cpu = process_cpu_s(server_pid) - server_cpu
    return (
        requests / wall,
        1000 * wall / requests,
        1000 * cpu / requests,
        1000 * server_cpu / requests,
    )


def main() -> None:
    """Run the benchmark and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests per measurement")
    parser.add_argument(
        "--concurrency", default="1,8,64", help="comma-separated concurrency levels"
    )
    args = parser.parse_args()
    levels = [int(level) for level in args.concurrency.split(",")]
    server, base_url = start_server()
    try:
        asyncio.run(_client_run(base_url, 50, 8))  # warm-up
        rows = []
        with tempfile.TemporaryDirectory() as tmp:
            data = write_data(Path(tmp) / "data", {("kv_retrieval", "2k"): args.requests})
            for level in levels:
                client = measure(
                    lambda level=level: asyncio.run(_client_run(base_url, args.requests, level)),
                    args.requests,
                    server.pid,
                )
                out = Path(tmp) / f"pred-{level}"
                config = PredictOptions(
                    data_dir=data,
                    out_dir=out,
                    model="stub-model",
                    base_url=base_url,
                    concurrency=level,
                    progress=False,
                )
                runner = measure(
                    lambda config=config: run_predictions(config), args.requests, server.pid
                )
                rows.append((level, client, runner))
    finally:
        server.terminate()
        server.wait()
    print(
        f"{args.requests} requests per cell; {platform.python_version()}, {os.cpu_count()} CPUs\n"
    )
    print(
        "| what | concurrency | req/s | wall ms/req | client CPU ms/req | stub server CPU ms/req |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, index in (("LLMClient", 1), ("predict", 2)):
        for row in rows:
            rate, wall, cpu, server_cpu = row[index]
            print(f"| {name} | {row[0]} | {rate:.0f} | {wall:.2f} | {cpu:.2f} | {server_cpu:.2f} |")


if __name__ == "__main__":
    main()
