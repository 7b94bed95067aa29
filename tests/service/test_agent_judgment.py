"""What an agent is told of its return's judgment, and what only the operator reads.

The stage's spending (calls, scans, pairs, tokens, seconds) counts the pairs made with
events the agent may not read too, so it stays in the operator's record (`spent`).
"""

import httpx

from builders import spent
from readmit.examples.travel import travel_scenario
from servicekit import Team, play

TOLD = {"verifier", "unscreened", "standing", "confirmed", "budget"}
SPENT = {"calls", "scans", "pairs", "tokens", "seconds"}


def test_a_return_tells_its_agent_what_the_judgment_found_not_what_it_spent(
    client: httpx.Client, team: Team
) -> None:
    _, second = play(client, team, travel_scenario())
    answer = second.json()
    again = client.get(f"/v1/decisions/{answer['decision']}", headers=team.auth("A1")).json()
    logged = spent(team.service.store, "trip", "A1")  # the operator's record of that return

    assert set(answer["judgment"]) == TOLD
    assert again["judgment"] == answer["judgment"]
    assert set(logged) >= SPENT | TOLD
    assert {k: logged[k] for k in ("verifier", "budget")} == {
        k: answer["judgment"][k] for k in ("verifier", "budget")
    }
