"""Run the 100-LongBench paper's dataset generator offline, its code unchanged.

    python paper_driver.py --paper DIR --out DIR --rows 20 --lengths 8,32,128
    python paper_driver.py --paper DIR --out DIR --rows 20 --one-length 32

DIR is an unmodified export of github.com/uservan/100-LongBench. paper_shim.py (beside this file)
stands in for its utils/utils.py (tokenizer cl100k_base, datasets read from LB100_SOURCES).

* ``--lengths``: the paper's ``generate_dataset.py`` runs as its own __main__: the base set at the
  first length, then all eight tasks at every length. This is the whole-workload run.
* ``--one-length L``: the script has no option for one length without its base set, nor for one
  task; this runs the body of its per-length loop for L alone (seeded as the script seeds, all
  eight tasks of its table in its order, the same file names), so a length can be timed alone.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# generate_dataset.py's task table, in its order; func[key][0] is generate_dataset_<key>
PAPER_TASKS = [
    "single_doc_qa",
    "multi_doc_qa",
    "single_doc_sum",
    "multi_doc_sum",
    "passage_retrieval",
    "passage_count",
    "kv_retrieval",
    "counting_stars",
]
PAPER_SEED = 42


def install_shim(paper: str) -> None:
    """Put the offline utils.utils in place and make the paper's folder the working one."""
    sys.path.insert(0, HERE)
    import paper_shim

    paper_shim.install()
    sys.modules["utils.utils"] = paper_shim
    sys.path.insert(0, paper)
    os.chdir(paper)


def run_script(paper: str, out: str, rows: int, lengths: str) -> None:
    """generate_dataset.py itself, with these arguments."""
    sys.argv = [
        "generate_dataset.py",
        "--rows",
        str(rows),
        "--lengths",
        lengths,
        "--save_path",
        out,
    ]
    runpy.run_path(os.path.join(paper, "generate_dataset.py"), run_name="__main__")


def run_one_length(out: str, rows: int, length: int) -> None:
    """The script's per-length loop body for one length: every task, one file each."""
    import paper_shim

    data_utils = importlib.import_module("utils.data_utils")
    paper_shim.seed_everything(PAPER_SEED)
    os.makedirs(out, exist_ok=True)
    for task in PAPER_TASKS:
        samples = getattr(data_utils, f"generate_dataset_{task}")(length, rows)
        with open(os.path.join(out, f"{task}_{length}.jsonl"), "w", encoding="utf-8") as handle:
            for sample in samples:
                json.dump(sample, handle, ensure_ascii=False)
                handle.write("\n")


def main() -> None:
    """Parse the arguments and run the paper's generator."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--paper", required=True, help="unmodified export of the paper's repository"
    )
    parser.add_argument("--out", required=True)
    parser.add_argument("--rows", type=int, default=20)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--lengths", help="the script's --lengths, e.g. 8,32,128 (k tokens)")
    group.add_argument("--one-length", type=int, help="one length (k tokens), no base set")
    args = parser.parse_args()
    paper, out = os.path.abspath(args.paper), os.path.abspath(args.out)
    install_shim(paper)
    if args.lengths:
        run_script(paper, out, args.rows, args.lengths)
    else:
        run_one_length(out, args.rows, args.one_length)


if __name__ == "__main__":
    main()
