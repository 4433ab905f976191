"""A dry run's judge bill: the calls and prompt tokens needed, and an estimated cost from per-million prices."""

import math
from dataclasses import dataclass

from longbench100.core.errors import UserError
from longbench100.judge.grader import JudgePlan


@dataclass(frozen=True)
class CostEstimate:
    """A dry run's judge cost in USD: prompt tokens at ``price_in`` plus at most ``max_tokens`` per call at ``price_out``."""

    prompt_tokens: int
    max_output_tokens: int
    usd: float


def check_prices(price_in: float | None, price_out: float | None) -> None:
    """Prices come together and are finite numbers, not negative."""
    if (price_in is None) != (price_out is None):
        raise UserError(
            "--price-in and --price-out go together (USD per million prompt and output tokens)"
        )
    if (
        price_in is not None
        and price_out is not None
        and not (0 <= price_in < math.inf and 0 <= price_out < math.inf)
    ):
        raise UserError(
            "--price-in and --price-out must be finite numbers, 0 or more "
            f"(USD per million tokens), not {price_in} and {price_out}"
        )


def estimate_cost(
    plan: JudgePlan, max_tokens: int, price_in: float, price_out: float
) -> CostEstimate:
    """An upper estimate of the judge's bill: every call is assumed to use its whole reply budget."""
    output_tokens = plan.calls * max_tokens
    usd = plan.prompt_tokens / 1e6 * price_in + output_tokens / 1e6 * price_out
    return CostEstimate(plan.prompt_tokens, output_tokens, usd)


def plan_lines(
    plan: JudgePlan | None, max_tokens: int, price_in: float | None, price_out: float | None
) -> list[str]:
    """What a dry run prints: the judge calls and tokens needed (``plan`` None: no task uses the judge), and the cost."""
    if plan is None:
        lines = ["dry run: no judge calls needed (no task uses the judge); nothing was sent"]
        return lines + (["estimated judge cost: $0.00"] if price_in is not None else [])
    extractions = (
        (
            f"; {plan.key_point_calls} of the calls extract key points, and the recall calls that use "
            "them carry estimated tokens"
        )
        if plan.key_point_calls
        else ""
    )
    lines = [
        f"dry run: {plan.calls} judge calls needed ({plan.unique_prompts} distinct prompts, {plan.cache_hits} cached), "
        f"carrying {plan.prompt_tokens} prompt tokens (tiktoken cl100k_base){extractions}; nothing was sent"
    ]
    if price_in is not None and price_out is not None:
        cost = estimate_cost(plan, max_tokens, price_in, price_out)
        lines.append(
            f"estimated judge cost: at most ${cost.usd:.2f} ({cost.prompt_tokens} prompt tokens at ${price_in:g}/M, "
            f"up to {cost.max_output_tokens} output tokens at ${price_out:g}/M assuming every reply uses "
            f"--judge-max-tokens {max_tokens})"
        )
    return lines
