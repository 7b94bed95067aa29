"""readmit: decide which remembered state a returning agent may still act on (TRACE).

The curated public API. Everything importable from ``readmit`` is covered by
semantic versioning; stage modules under ``readmit.admission`` are public for
reading, but their helpers may change.
"""

from readmit.admission import admit
from readmit.admission.context import ReturnContext
from readmit.admission.coverage import Coverage
from readmit.admission.decision import Decision, Issued, Withheld
from readmit.admission.invalidation.embeddings import Embedder
from readmit.admission.invalidation.implicit import Later, Pair, Verdict, Verifier
from readmit.admission.view import VerifiedView, verify_view
from readmit.decide import Decided
from readmit.errors import (
    ConfigError,
    InvalidEvent,
    InvalidInput,
    MigrationError,
    ReadmitError,
    StoreError,
    VerifierUnavailable,
    ViewRejected,
)
from readmit.events import (
    Assert,
    Close,
    Depart,
    Event,
    Evidence,
    ItemDraft,
    ObligationDraft,
    OpenObligation,
    RecordExperience,
    Resolve,
    ReturnRequest,
    Revoke,
    Step,
    Supersede,
)
from readmit.model import (
    Agent,
    Checkpoint,
    Experience,
    Item,
    Kind,
    Obligation,
    Receipt,
    Returner,
    Scope,
    Validity,
)
from readmit.plugins import make_embedder, make_verifier
from readmit.policy import OnIncomplete, Policy
from readmit.reasons import Exclusion, Reason, Stage
from readmit.replay import replay
from readmit.scenario import Scenario, load_scenario, read_scenario
from readmit.signing import HmacSha256Signer, Signer
from readmit.store import WorkStateStore, open_store

__all__ = [
    "Agent",
    "Assert",
    "Checkpoint",
    "Close",
    "ConfigError",
    "Coverage",
    "Decided",
    "Decision",
    "Depart",
    "Embedder",
    "Event",
    "Evidence",
    "Exclusion",
    "Experience",
    "HmacSha256Signer",
    "InvalidEvent",
    "InvalidInput",
    "Issued",
    "Item",
    "ItemDraft",
    "Kind",
    "Later",
    "MigrationError",
    "Obligation",
    "ObligationDraft",
    "OnIncomplete",
    "OpenObligation",
    "Pair",
    "Policy",
    "ReadmitError",
    "Reason",
    "Receipt",
    "RecordExperience",
    "Resolve",
    "ReturnContext",
    "ReturnRequest",
    "Returner",
    "Revoke",
    "Scenario",
    "Scope",
    "Signer",
    "Stage",
    "Step",
    "StoreError",
    "Supersede",
    "Validity",
    "Verdict",
    "VerifiedView",
    "Verifier",
    "VerifierUnavailable",
    "ViewRejected",
    "Withheld",
    "WorkStateStore",
    "admit",
    "load_scenario",
    "make_embedder",
    "make_verifier",
    "open_store",
    "read_scenario",
    "replay",
    "verify_view",
]
