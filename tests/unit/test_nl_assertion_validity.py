"""The local NL-assertion judge against GPT-4.1's recorded verdicts on run40 (issue 29 item 3).

The card ``nodes/goal_shift/judges/validity.json`` must be what ``scripts/nl_assertion_validity``
measures today (it cannot drift from the judge), and the judge must agree with GPT-4.1 at
kappa >= 0.4 on the assertions it decides (a development figure: its cut points were set here).
"""

from __future__ import annotations

import pytest

from scripts.nl_assertion_validity import card, measure, recorded_channels
from tests.unit.test_tau2_loader import RUN40, needs_run40
from todeval.evals.datasets.tau2 import load_goal_shift_run
from todeval.evals.goal_shift_schema import Conversation
from todeval.nodes.goal_shift.judges.nl_assertion import CARDS
from todeval.nodes.judges.validity import read_cards


@pytest.mark.slow
@needs_run40
def test_the_local_nl_judge_agrees_with_gpt41_and_its_card_is_current() -> None:
    run = load_goal_shift_run(RUN40)
    conversations = [r for r in run.records if isinstance(r, Conversation)]
    figures = measure(conversations, recorded_channels(RUN40))
    assert figures["assertions"] == 125 and figures["recorded_met"] == 86
    decided = figures["overall"]["judged"]
    assert decided["kappa"] >= 0.4
    assert figures["overall"]["abstain_negative"]["kappa"] >= 0.4
    assert figures["undecided"] == figures["assertions"] - decided["n"]
    shipped = read_cards(CARDS)["local"]
    fresh = card(figures, shipped.checks[0].data.split(":")[0])
    assert [c.model_dump() for c in fresh.checks] == [c.model_dump() for c in shipped.checks]
    assert shipped.checks[0].kappa == pytest.approx(decided["kappa"], abs=1e-3)
