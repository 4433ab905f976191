"""``longbench100 export``: a data folder as tasks of other evaluation tools."""

from __future__ import annotations

from pathlib import Path

import click


@click.group("export")
def export() -> None:
    """Write a data folder as tasks another evaluation tool runs (lm-evaluation-harness).

    For Inspect no export is needed: `inspect eval longbench100/longbench100 -T data=DATA --model M`
    reads the data folder directly (docs/integrations.md).
    """


@export.command("lm-eval")
@click.argument("data_dir", type=click.Path(path_type=Path), metavar="DATA")
@click.argument("out_dir", type=click.Path(path_type=Path), metavar="OUT")
@click.option(
    "--controls",
    is_flag=True,
    help="Also export the control twins (DATA/controls) as tasks "
    "longbench100_<task>_<label>_controls, group longbench100_controls "
    "(then score --controls).",
)
def lm_eval_command(data_dir: Path, out_dir: Path, controls: bool) -> None:
    """Write one lm-evaluation-harness task per task and length of DATA into OUT, and a group per suite.

    \b
    Then, with lm-eval installed (pip install 'lm-eval[api]'):
      lm_eval --model local-chat-completions --apply_chat_template \\
          --model_args base_url=http://127.0.0.1:8000/v1/chat/completions,model=M,tokenizer_backend=None \\
          --include_path OUT --tasks longbench100_100-longbench --log_samples --output_path LOGS
      longbench100 score --data DATA --predictions LOGS --out results.json
    lm-eval prints each task's classic score (as `score --metric classic`); `score` reads its samples
    for judges, Base Ability and LongScore. OUT names its documents relative to itself: move or
    share it whole.
    """
    from longbench100.core.errors import UserError  # noqa: PLC0415
    from longbench100.folders.guard import guard_output_dir  # noqa: PLC0415
    from longbench100.folders.lock import output_lock  # noqa: PLC0415

    from ..integrations.lm_eval_export import export_lm_eval  # noqa: PLC0415

    if not data_dir.is_dir():
        raise UserError(f"DATA {data_dir}: no such folder")
    guard_output_dir(out_dir, "OUT", "lm-eval-export", {"DATA": data_dir})
    with output_lock(out_dir, "OUT"):
        exported, groups = export_lm_eval(data_dir, out_dir, controls)
    for group, members in groups.items():
        click.echo(f"{group}: {len(members)} tasks")  # each a group of its lengths
    click.echo(
        f"wrote {len(exported)} lm-eval tasks ({sum(task.documents for task in exported)} documents) to {out_dir}"
    )
    click.echo(
        f"run: lm_eval --include_path {out_dir} --tasks {','.join(groups)} --log_samples --output_path LOGS ..."
    )
