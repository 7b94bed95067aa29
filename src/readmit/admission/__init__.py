"""The TRACE return pipeline: ``admit()`` reads top to bottom as the stages of spec §3."""

from typing import Literal

from readmit.admission.capture import capture
from readmit.admission.context import ReturnContext
from readmit.admission.coverage import cover
from readmit.admission.decision import Decision, Issued, Withheld
from readmit.admission.gates import DEFAULT_GATES, apply_gates, max_chars
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.explicit import resolve_explicit
from readmit.admission.invalidation.implicit import Progress, Verifier, resolve_implicit
from readmit.admission.invalidation.propagation import propagate
from readmit.admission.invalidation.scanner import scan
from readmit.admission.readmission import readmit
from readmit.admission.view import build_view, expose, sign_view
from readmit.policy import OnIncomplete, Policy
from readmit.reasons import Exclusion
from readmit.signing import Signer


def admit(
    ctx: ReturnContext,
    *,
    policy: Policy,
    verifier: Verifier | None,
    signer: Signer,
    on_progress: Progress | None = None,
    embedder: Embedder | None = None,
) -> Decision:
    """Run the TRACE return pipeline on one immutable context.

    Args:
        ctx: C = D_a ⊕ Δ for this return.
        policy: budgets, thresholds and what to do when coverage falls short.
        verifier: judges implicit invalidation; ``None`` runs the explicit stages only.
        signer: signs (and re-verifies) the Return View.
        on_progress: called after each verifier call with (judged, proposed).
        embedder: lets the scanner also propose each later event's nearest items.

    Raises:
        ViewRejected: if a freshly signed view fails its own verification.
    """
    pool = list(capture(ctx))
    pool, explicit = resolve_explicit(pool, ctx)
    implicit: list[Exclusion] = []
    if verifier is not None and policy.implicit:
        screening = scan(pool, ctx, policy.scan_top_k, embedder, policy.scan_embed_top_k)
        pool, implicit = resolve_implicit(
            pool, screening.pairs, verifier, policy, on_progress, screening.unscreened
        )
    pool, premise = propagate(pool, excluded=(*explicit, *implicit))
    eligible, gated = apply_gates(pool, ctx, (*DEFAULT_GATES, max_chars(policy.max_item_chars)))
    selection = cover(eligible, ctx.role_obligations, policy)
    exclusions = (*explicit, *implicit, *premise, *gated, *selection.dropped)
    if policy.complete_view_gate and not selection.coverage.meets(policy):
        outcome: Literal["blocked", "reset"] = (
            "reset" if policy.on_incomplete is OnIncomplete.RESET else "blocked"
        )
        return Withheld(
            outcome=outcome,
            selected=selection.items,
            coverage=selection.coverage,
            exclusions=exclusions,
            withheld=ctx.experiences,
        )
    signed = sign_view(build_view(ctx, selection, exclusions, policy), signer)
    verified = expose(signed, ctx, signer, policy)
    readmitted, withheld = (
        readmit(verified, ctx.experiences)
        if policy.source_bound_readmission
        else (ctx.experiences, ())
    )
    return Issued(
        view=verified,
        items=selection.items,
        coverage=selection.coverage,
        exclusions=exclusions,
        readmitted=readmitted,
        withheld=withheld,
    )


__all__ = ["Decision", "Issued", "ReturnContext", "Withheld", "admit"]
