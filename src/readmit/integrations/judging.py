"""Judging between returns: what a memory layer serves, against what came after the return.

The memory layers (the Mem0 wrapper, the Agents SDK session, the LangGraph store) serve an
agent's memory between its returns. They follow what is withdrawn and the verdicts stored
since the return (`readmit.integrations.following`), but they do not judge: an item a later
event made stale without withdrawing it stays served until a return finds it, the agent's
own or a teammate's, or until judging ahead stores a verdict on it. `judge` is that
judging, for an agent that is present: its latest return decided again now, to the same
departure and for the same task and purpose (`readmit.ahead.judge_ahead`), nothing
recorded but the judgment. The screening watermarks of that return spare what it judged:
only what came after is judged. What it confirms binds every later return, and the agent's
layer hides it at its next read (at once when the layer uses the same store object).
"""

from readmit.admission.invalidation.implicit import Progress
from readmit.admission.invalidation.judgment import Judgment
from readmit.ahead import judge_ahead
from readmit.errors import InvalidInput
from readmit.integrations.team import Member


def judge(member: Member, on_progress: Progress | None = None) -> Judgment | None:
    """Judge what ``member``'s latest return admitted against what came after it.

    ``None`` when the member has no verifier (``Member(verifier=None)``: nothing judges).
    ``on_progress`` is called after each verifier call and may raise to stop early
    (`readmit.ahead.judge_ahead`).

    Raises:
        InvalidInput: if the member has not returned (a layer decides the return it owes
            at its first read; judge then).
    """
    if member.verifier is None:
        return None
    if member.latest is None:
        problem = f"agent {member.agent!r} has not returned: there is nothing served to judge"
        raise InvalidInput(problem)
    returner = member.latest.context.returner
    return judge_ahead(
        member.store,
        member.workspace,
        member.agent,
        task=returner.task,
        purpose=returner.purpose,
        policy=member.policy,
        verifier=member.verifier,
        signer=member.signer,
        at=member.time(),
        on_progress=on_progress,
    )
