"""Issue 50 item 5: one loop grows the C ladders of auto sweeps and of XiAlphaSearchCV
(`xialpha.selection.c_rounds.grow_ladders`): the first rung (with the C stored before) in round 1, then
each ladder the rule gives a C gets that one C the next round, until no Step names a C or the rounds
run out. The callers supply only the evaluation and the rule; these tests use neither Dask nor a fit."""

from __future__ import annotations

import pytest

from xialpha.selection.c_extension import CAP, INTERIOR, Step
from xialpha.selection.c_rounds import Round, grow_ladders
from xialpha.selection.edges import Edge
from xialpha.spec.grid import AUTO_C_FACTOR, AUTO_C_START


class Ladder:
    """A caller's side: records each round, and steps each ladder up (x AUTO_C_FACTOR) until it has
    `sizes[key]` C, then says INTERIOR; keys not in `sizes` get no Step."""

    def __init__(self, sizes: dict[str, int]):
        self.sizes = sizes
        self.rounds: list[Round[str]] = []

    def evaluate(self, ladder_round: Round[str]) -> None:
        self.rounds.append(ladder_round)

    def next_steps(self) -> dict[str, Step]:
        ladders = self.rounds[-1].ladders
        return {
            key: Step(max(ladders[key]) * AUTO_C_FACTOR, Edge.HIGH)
            if len(ladders[key]) < size
            else Step(None, INTERIOR)
            for key, size in self.sizes.items()
        }


def test_round_one_evaluates_the_first_rung_and_each_later_round_one_C_per_ladder_the_rule_steps():
    caller = Ladder({"a": AUTO_C_START + 2, "b": AUTO_C_START + 1})
    grown = grow_ladders({"a": 1.0, "b": 2.0, "c": 4.0}, caller.evaluate, caller.next_steps, rounds=10)
    first = caller.rounds[0]
    assert first.number == 1
    assert first.rungs == first.ladders
    assert first.rungs["a"] == tuple(AUTO_C_FACTOR**i for i in range(AUTO_C_START))
    assert [r.rungs for r in caller.rounds[1:]] == [
        {"a": (AUTO_C_FACTOR**AUTO_C_START,), "b": (2.0 * AUTO_C_FACTOR**AUTO_C_START,)},
        {"a": (AUTO_C_FACTOR ** (AUTO_C_START + 1),)},
    ]
    assert grown.rounds == 3  # the rule said INTERIOR for both after round 3: no round 4
    assert grown.steps == {"a": Step(None, INTERIOR), "b": Step(None, INTERIOR)}  # "c": given no Step
    assert {key: len(C) for key, C in grown.ladders.items()} == {
        "a": AUTO_C_START + 2,
        "b": AUTO_C_START + 1,
        "c": AUTO_C_START,
    }
    assert grown.ladders == caller.rounds[-1].ladders


def test_the_C_stored_before_join_the_first_round_and_are_not_evaluated_as_new_again():
    caller = Ladder({"a": AUTO_C_START + 2})
    grow_ladders({"a": 1.0}, caller.evaluate, caller.next_steps, rounds=10, stored={"a": [0.5, 4.0]})
    assert caller.rounds[0].rungs["a"] == (0.5, *(AUTO_C_FACTOR**i for i in range(AUTO_C_START)))
    assert caller.rounds[1].rungs == {"a": (AUTO_C_FACTOR**AUTO_C_START,)}  # the new C alone
    assert len(caller.rounds) == 2  # AUTO_C_START + 2 C: the rule says INTERIOR


@pytest.mark.parametrize("rounds", [1, 3])
def test_the_rounds_stop_at_their_cap_though_the_rule_goes_on(rounds):
    caller = Ladder({"a": 100})
    grown = grow_ladders({"a": 1.0}, caller.evaluate, caller.next_steps, rounds=rounds)
    assert len(caller.rounds) == grown.rounds == rounds
    assert grown.steps["a"].why == Edge.HIGH  # asked after the last round too, its C not evaluated
    assert len(grown.ladders["a"]) == AUTO_C_START + rounds


def test_a_rule_that_gives_no_C_ends_the_rounds_after_the_first():
    calls = []
    grown = grow_ladders({"a": 1.0}, calls.append, lambda: {"a": Step(None, CAP)}, rounds=10)
    assert len(calls) == grown.rounds == 1
    assert grown.steps == {"a": Step(None, CAP)}
