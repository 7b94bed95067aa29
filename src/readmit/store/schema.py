"""The schema's history: every migration, in order (`readmit.store.migrations` applies them).

The schema is written once for both dialects; ``{serial}``, ``{without_rowid}``,
``{lz4_decisions}`` and ``{log_fk}`` are the only differences. A step may also be a
function of the connection, where the change needs what only Python reads (an event's
body). Never edit a shipped migration; add a new one at the end.
"""

from collections.abc import Callable

from readmit.store.buckets import RATE_BUCKETS
from readmit.store.connection import Connection
from readmit.store.lapses import restore_digests
from readmit.store.obligations import FRONTIERS
from readmit.store.restatements import (
    in_own_words_again,
    judged_again,
    lapses_restated_today,
    restated_by_their_evidence,
)
from readmit.store.stand_ins import stand_ins_of_standing
from readmit.store.verdicts import ends_of_evidence

Step = str | Callable[[Connection], None]
"""A migration's step: SQL (formatted for the dialect), or a function of the connection,
run in the migration's transaction."""

MIGRATIONS: list[tuple[str, list[Step]]] = [
    (
        "m001_initial",
        [
            "CREATE TABLE workspaces (id TEXT PRIMARY KEY)",
            """CREATE TABLE agents (
            workspace TEXT NOT NULL REFERENCES workspaces(id), id TEXT NOT NULL,
            principal TEXT NOT NULL, role TEXT NOT NULL, PRIMARY KEY (workspace, id))""",
            """CREATE TABLE events (
            workspace TEXT NOT NULL REFERENCES workspaces(id), epoch BIGINT NOT NULL,
            id TEXT NOT NULL, at TEXT NOT NULL, author TEXT NOT NULL, op TEXT NOT NULL,
            body TEXT NOT NULL, digest TEXT NOT NULL,
            PRIMARY KEY (workspace, epoch), UNIQUE (workspace, id))""",
            """CREATE TABLE names (
            workspace TEXT NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL,
            PRIMARY KEY (workspace, id)) {without_rowid}""",
            """CREATE TABLE items (
            workspace TEXT NOT NULL, id TEXT NOT NULL, epoch BIGINT NOT NULL, key TEXT,
            status TEXT NOT NULL DEFAULT 'active', body TEXT NOT NULL,
            PRIMARY KEY (workspace, id))""",
            "CREATE INDEX items_by_epoch ON items (workspace, epoch)",
            "CREATE INDEX items_by_key ON items (workspace, key) WHERE key IS NOT NULL",
            """CREATE TABLE evidence (
            workspace TEXT NOT NULL, id TEXT NOT NULL, epoch BIGINT NOT NULL,
            digest TEXT NOT NULL, PRIMARY KEY (workspace, id))""",
            """CREATE TABLE obligations (
            workspace TEXT NOT NULL, id TEXT NOT NULL, epoch BIGINT NOT NULL,
            resolved_epoch BIGINT, body TEXT NOT NULL, PRIMARY KEY (workspace, id))""",
            """CREATE TABLE checkpoints (
            id {serial}, workspace TEXT NOT NULL, agent TEXT NOT NULL,
            epoch BIGINT NOT NULL, at TEXT NOT NULL, digest TEXT NOT NULL)""",
            "CREATE INDEX checkpoints_by_agent ON checkpoints (workspace, agent, at)",
            """CREATE TABLE checkpoint_items (
            checkpoint BIGINT NOT NULL, item TEXT NOT NULL,
            PRIMARY KEY (checkpoint, item)) {without_rowid}""",
            """CREATE TABLE experiences (
            workspace TEXT NOT NULL, agent TEXT NOT NULL, id TEXT NOT NULL, epoch BIGINT NOT NULL,
            at TEXT NOT NULL, source_item TEXT NOT NULL, text TEXT NOT NULL,
            PRIMARY KEY (workspace, agent, id))""",
            """CREATE TABLE decisions (
            id {serial}, workspace TEXT NOT NULL, agent TEXT NOT NULL, at TEXT NOT NULL,
            epoch BIGINT NOT NULL, outcome TEXT NOT NULL, body TEXT NOT NULL)""",
        ],
    ),
    (
        "m002_agent_keys",
        [
            """CREATE TABLE agent_keys (
            key_hash TEXT PRIMARY KEY, workspace TEXT NOT NULL, agent TEXT NOT NULL,
            created_at TEXT NOT NULL,
            FOREIGN KEY (workspace, agent) REFERENCES agents (workspace, id))""",
        ],
    ),
    (
        "m003_judgments",
        [
            """CREATE TABLE judgments (
            key TEXT PRIMARY KEY, verifier TEXT NOT NULL, invalidates INTEGER NOT NULL,
            confidence DOUBLE PRECISION NOT NULL, reason TEXT NOT NULL, terms TEXT NOT NULL)""",
        ],
    ),
    (
        "m004_standing_verdicts",
        [
            """CREATE TABLE invalidations (
            workspace TEXT NOT NULL, item TEXT NOT NULL, event TEXT NOT NULL,
            event_epoch BIGINT NOT NULL, evidence TEXT NOT NULL, verifier TEXT NOT NULL,
            confidence DOUBLE PRECISION NOT NULL, detail TEXT NOT NULL,
            decided_epoch BIGINT NOT NULL, restore_text TEXT, restore_item TEXT,
            lapsed_epoch BIGINT, PRIMARY KEY (workspace, item))""",
            "CREATE INDEX invalidations_by_text ON invalidations (workspace, restore_text)",
            "CREATE INDEX invalidations_by_item ON invalidations (workspace, restore_item)",
            """CREATE TABLE screenings (
            workspace TEXT NOT NULL, verifier TEXT NOT NULL, item TEXT NOT NULL,
            through BIGINT NOT NULL, PRIMARY KEY (workspace, verifier, item))""",
        ],
    ),
    (
        # Decision ids are numbered per workspace, so one reveals nothing of another
        # workspace's activity. A decision stored before keeps its global id as its number
        # (unique in its workspace too), so every id already handed out still names it.
        "m005_decision_numbers",
        [
            "ALTER TABLE decisions ADD COLUMN number BIGINT",
            "UPDATE decisions SET number = id",
            "CREATE UNIQUE INDEX decisions_by_number ON decisions (workspace, number)",
        ],
    ),
    (
        # An agent's own decisions, counted at every return (the number it is shown) and
        # listed by explain: without it, both read every decision of the workspace.
        "m006_decisions_by_agent",
        ["CREATE INDEX decisions_by_agent ON decisions (workspace, agent, number)"],
    ),
    (
        # A large workspace's decision body is megabytes of JSON, written at every return:
        # PostgreSQL's default compression (pglz) took 9.3 ms to store a 290 kB body on
        # this project's machine, lz4 2.3 ms. SQLite stores bodies as they are.
        "m007_decisions_lz4",
        ["{lz4_decisions}"],
    ),
    (
        # Every event has an author among its workspace's agents (the writer refuses any
        # other), an agent row references its workspace, and no workspace is ever deleted:
        # the log's own foreign key re-checked, row by row, what holds for the whole batch.
        # On PostgreSQL that is a trigger and a row lock an event: 8-10 us of a 70 us append
        # (a 20,000-event COPY into the log took 22 us a row with it, 12-14 without). In
        # SQLite it is a lookup in the same file that costs nothing measurable: kept there.
        "m008_log_without_workspace_fk",
        ["{log_fk}"],
    ),
    (
        # An item's withdrawal is a row appended here, not an UPDATE that dirtied the page of
        # an item written long before (on SQLite 30 us a withdrawal with its share of the
        # COMMIT, against 2-6 for a narrow insert). The old column is renamed: a readmit from
        # before fails loudly, instead of reading every item withdrawn since as active.
        "m009_withdrawn_items",
        [
            """CREATE TABLE withdrawn (
            workspace TEXT NOT NULL, id TEXT NOT NULL, status TEXT NOT NULL,
            PRIMARY KEY (workspace, id)) {without_rowid}""",
            # Renamed first: on PostgreSQL that locks the table until the migration commits,
            # so a readmit from before it cannot withdraw an item between the copy and the
            # rename (SQLite's write lock already holds every other writer off).
            "ALTER TABLE items RENAME COLUMN status TO status_before_m009",
            "INSERT INTO withdrawn (workspace, id, status) SELECT workspace, id, "
            "status_before_m009 FROM items WHERE status_before_m009 <> 'active'",
        ],
    ),
    (
        # Screening watermarks are per reader (principal and role): one reader's let another,
        # whose context quotes more (an item only it may read), skip judging what it would
        # have found. The rows before are dropped, not guessed: each reader's next return
        # judges again (its verifier's cache answers pairs it has seen).
        "m010_screenings_by_reader",
        [
            "DROP TABLE screenings",
            """CREATE TABLE screenings (
            workspace TEXT NOT NULL, principal TEXT NOT NULL, role TEXT NOT NULL,
            verifier TEXT NOT NULL, item TEXT NOT NULL, through BIGINT NOT NULL,
            PRIMARY KEY (workspace, principal, role, verifier, item))""",
        ],
    ),
    (
        # A departure may say what its agent will return to, so that the return can be
        # judged while it is away before any view showed its task (`readmit.ahead`).
        "m011_departure_task",
        [
            "ALTER TABLE checkpoints ADD COLUMN task TEXT",
            "ALTER TABLE checkpoints ADD COLUMN purpose TEXT",
        ],
    ),
    (
        # What a departure left out as no longer valid (items its agent may read under a
        # standing verdict, past their validity or on a fallen premise): a later
        # withdrawal of one is quoted to the agent's return as a withdrawal, as it would
        # be had the checkpoint held it. When an item was withdrawn (NULL for rows from
        # before), so that what one event replaced is known. Which reader (principal,
        # role) confirmed a verdict: its verifier's wording, which may name what only
        # such readers may read, is shown to them alone.
        "m012_left_out_withdrawn_epoch_verdict_reader",
        [
            """CREATE TABLE checkpoint_left_out (
            checkpoint BIGINT NOT NULL, item TEXT NOT NULL,
            PRIMARY KEY (checkpoint, item)) {without_rowid}""",
            "ALTER TABLE withdrawn ADD COLUMN epoch BIGINT",
            "ALTER TABLE invalidations ADD COLUMN principal TEXT",
            "ALTER TABLE invalidations ADD COLUMN role TEXT",
        ],
    ),
    (
        # Whether a checkpoint recorded what it left out (1 since this migration). One from
        # before m012 recorded nothing of it, and one made between m012 and this migration
        # may have had nothing to record: a return to either finds what it left out from the
        # items and the log instead (`readmit.store.left_out`). One with rows is marked.
        "m013_left_out_recorded",
        [
            "ALTER TABLE checkpoints ADD COLUMN left_out_recorded INTEGER",
            "UPDATE checkpoints SET left_out_recorded = 1 "
            "WHERE id IN (SELECT checkpoint FROM checkpoint_left_out)",
        ],
    ),
    (
        # Who judges a workspace ahead now, of several server processes (`store.leases`).
        "m014_leases",
        [
            """CREATE TABLE leases (
            workspace TEXT NOT NULL, name TEXT NOT NULL, holder TEXT NOT NULL,
            until DOUBLE PRECISION NOT NULL, PRIMARY KEY (workspace, name))""",
        ],
    ),
    (
        # Watermarks are kept under the screening's key (the verifier with its cut-offs,
        # the threshold, the scanner's settings: `cache.screening_key`), not the verifier's
        # name: one kept under another threshold spared a return a judgment that would have
        # excluded. The rows before name no threshold, so none binds a return now: they go,
        # and each reader's next return judges again (the verdict cache answers pairs seen).
        "m015_screenings_by_screening",
        ["DELETE FROM screenings"],
    ),
    (
        # A restatement bounded in time, task or purpose no longer restores a premise
        # (`readmit.events.restates`): what one lapsed before stands again, unless a later
        # restatement restores it today. A return before did not judge an item against an
        # event such a restatement seemed to undo, and kept its watermark past it: they go,
        # as in m015 (the verdict cache answers the pairs it has seen).
        "m016_bounded_restatements_restore_nothing",
        [lapses_restated_today, "DELETE FROM screenings"],
    ),
    (
        # Nor does one resting on other items (``depends_on``): it falls with them. As m016.
        "m017_restatements_with_premises_restore_nothing",
        [lapses_restated_today, "DELETE FROM screenings"],
    ),
    (
        # A verdict resting on news lapses once a later item of the news item's key replaces
        # it, as a supersession does (`readmit.store.verdicts`); before, it stood for good.
        # Such a replacement is a row of ``withdrawn`` (with no epoch before m012: then the
        # verdict's own, as the news can only have been replaced after it was asserted).
        # Watermarks stay: the returns before judged against that news, not past it.
        "m018_news_replaced_by_its_key_restores",
        [
            "UPDATE invalidations SET lapsed_epoch = (SELECT COALESCE(w.epoch, "
            "invalidations.event_epoch) FROM withdrawn w WHERE w.workspace = "
            "invalidations.workspace AND w.id = invalidations.restore_item) "
            "WHERE lapsed_epoch IS NULL AND restore_item IS NOT NULL AND EXISTS (SELECT 1 "
            "FROM withdrawn w WHERE w.workspace = invalidations.workspace "
            "AND w.id = invalidations.restore_item)"
        ],
    ),
    (
        # Nor does a restatement whose author may not read the statement withdrawn (another
        # principal's note in the same words about its own state): as in m016.
        "m019_restatements_by_whoever_may_read_what_they_restate",
        [lapses_restated_today, "DELETE FROM screenings"],
    ),
    (
        # A replacement in other words for fewer uses is shown as a withdrawal
        # (`readmit.admission.invalidation.observations`): a return before judged it as a
        # replacement and kept its watermark past it. They go, as in m015.
        "m020_narrowing_replacements_judged_again",
        ["DELETE FROM screenings"],
    ),
    (
        # A replacement in the same words for fewer readers restores what it withdrew for an
        # item all of whose readers may read it (`readmit.admission.invalidation.restored`);
        # before, the verdict stood for every agent. Watermarks go, as in m016.
        "m021_restated_by_their_evidence",
        [restated_by_their_evidence, "DELETE FROM screenings"],
    ),
    (
        # A verdict keeps the item it rests on (`readmit.store.restoring`): of several a keyed
        # event replaced, the one its judged observation withdrew (one kept before does not
        # say, and nothing restores it); news filed again in its own words, the new item,
        # whose withdrawal restores it.
        "m022_verdict_premises",
        ["ALTER TABLE invalidations ADD COLUMN premise TEXT"],
    ),
    (
        # Verdicts taken to rest on the withdrawal of news filed again in its own words, and
        # those on a keyed event that replaced several items, lapse to be judged again (and
        # keep what they rest on). Watermarks go, as in m016: a replacement in other words
        # some readers may not read is now shown to their items as a withdrawal
        # (`readmit.admission.invalidation.readers`), where returns before judged it in its
        # words and screened past it.
        "m023_verdicts_judged_again",
        [judged_again, "DELETE FROM screenings"],
    ),
    (
        # News filed again for fewer readers or uses, in any words, is news still, to every
        # item (`readmit.admission.invalidation.readers`): returns before screened past it
        # without judging its words. Watermarks go, as in m020; verdicts resting on such a
        # refiling's withdrawal, or on an item in the excluded item's own words, lapse to be
        # judged again, as in m023.
        "m024_news_filed_again_for_fewer",
        [in_own_words_again, "DELETE FROM screenings"],
    ),
    (
        # An observation that has ended is no evidence: a verdict resting on it no longer
        # stands at a return or departure dated at or after its end (`readmit.store.verdicts`).
        # Each verdict keeps when its evidence ends; watermarks stay, as what ended is not shown.
        "m025_verdicts_end_with_their_evidence",
        ["ALTER TABLE invalidations ADD COLUMN restore_until TEXT", ends_of_evidence],
    ),
    (
        # A verdict whose evidence put an item in the place of the statement it withdrew
        # lapses where that item is replaced by one that holds wherever the statement held
        # (`readmit.store.stand_ins`): each standing verdict keeps its stand-in, followed
        # through the log, and one already so restored lapses. Watermarks stay: the lapsed
        # item is screened again from its own, as any lapsed verdict's is.
        "m026_verdicts_follow_what_stands_in",
        [
            "ALTER TABLE invalidations ADD COLUMN restore_in_place TEXT",
            "CREATE INDEX invalidations_by_stand_in ON invalidations (workspace, restore_in_place)",
            stand_ins_of_standing,
        ],
    ),
    (
        # What a keyed event replaced is found by its epoch, not by reading every item its
        # key held (`readmit.store.restoring`).
        "m027_replacements_by_epoch",
        ["CREATE INDEX withdrawn_by_epoch ON withdrawn (workspace, epoch, status)"],
    ),
    ("m028_rate_buckets", [RATE_BUCKETS]),  # `readmit.store.buckets`
    ("m029_obligations_by_frontier", FRONTIERS),  # `readmit.store.obligations`
    (
        # Each verdict is numbered (1, then one more each time a lapsed or ended one is
        # replaced), and a departure keeps the number of the verdict under which it left an
        # item out (0: none stood; NULL: a checkpoint from before). A return to it lets the
        # item back whenever another verdict stands now (`readmit.store.let_back.readmitted`),
        # also one decided at the departure's own epoch, which the epoch could not tell apart.
        "m030_verdict_numbers",
        [
            "ALTER TABLE invalidations ADD COLUMN verdict BIGINT NOT NULL DEFAULT 1",
            "ALTER TABLE checkpoint_left_out ADD COLUMN verdict BIGINT",
        ],
    ),
    (
        # Each store of verdicts (a return's, or judging ahead's) is numbered, one more than
        # the workspace's last, under its lock, and its verdicts keep the number (``noted``;
        # NULL for those from before), so that a memory layer serving between returns finds
        # those stored since the one its return's context read
        # (`readmit.store.held.Held.judged_since`): a verdict decided before a return (a
        # return that read its context earlier, judging ahead) may be stored after it.
        "m031_verdicts_noted",
        [
            "ALTER TABLE invalidations ADD COLUMN noted BIGINT",
            "CREATE INDEX invalidations_by_noted ON invalidations (workspace, noted)",
        ],
    ),
    (
        # A reader's screening keeps its date and binds only returns dated at or after it
        # (`readmit.store.verdicts`). Watermarks go, as in m016: their dates are not known.
        # A date is required, so a readmit from before, still running, fails to keep its
        # screenings instead of keeping them undated past a date a newer one kept.
        "m032_screenings_dated",
        [
            "DELETE FROM screenings",
            "ALTER TABLE screenings ADD COLUMN at TEXT CHECK (at IS NOT NULL)",
        ],
    ),
    (
        # A verdict is found by the digest of the text whose restatement lapses it, not by
        # the text (`readmit.store.lapses.restore_digests`).
        "m033_verdicts_by_digest",
        [
            "DROP INDEX invalidations_by_text",
            "ALTER TABLE invalidations ADD COLUMN restore_digest TEXT",
            restore_digests,
            "CREATE INDEX invalidations_by_digest ON invalidations (workspace, restore_digest)",
        ],
    ),
    (
        # A reader's screenings are kept by the digests of its principal and role, and of
        # the verifier (`readmit.store.verdicts.reader_digest`): their names overflowed
        # PostgreSQL's index row. Kept screenings go, as in m032.
        "m034_screenings_by_digest",
        [
            "DROP TABLE screenings",
            """CREATE TABLE screenings (
            workspace TEXT NOT NULL, reader TEXT NOT NULL, verifier TEXT NOT NULL,
            verifier_digest TEXT NOT NULL, item TEXT NOT NULL, through BIGINT NOT NULL,
            at TEXT CHECK (at IS NOT NULL),
            PRIMARY KEY (workspace, reader, verifier_digest, item))""",
        ],
    ),
]
