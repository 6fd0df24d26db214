"""The database schema, as ordered migrations keyed by ``PRAGMA user_version``."""

from __future__ import annotations

import re

from playground.storage.rater_rows import MIGRATION as RATER_MIGRATION
from playground.storage.seats import MIGRATION as SEATS_MIGRATION
from playground.storage.study_rows import MIGRATION as STUDY_MIGRATION
from playground.storage.study_rows import RUNNER_MIGRATION

_DRAWN = re.compile(r"best score (.*?) < imThreshold .*; System-1 reply drawn", re.I | re.S)


def legacy_best_score(score: float | None, reason: str, policy: str | None) -> float | None:
    """A decision's best score where only ``score`` was kept (before migration 10): what
    migration 10 fills in, for rows imported from an export made before it."""
    if (policy or "inner-thoughts") != "inner-thoughts" or score is None:
        return None
    drawn = _DRAWN.match(reason or "")
    if drawn is None:
        return score
    try:
        return float(drawn.group(1))
    except ValueError:
        return score


MIGRATIONS: list[str] = [
    # 1: the initial schema (documented in docs/schema.md)
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        updated_at TEXT,
        finished_at TEXT,
        status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted', 'failed')),
        end_reason TEXT,
        engine TEXT NOT NULL,
        model TEXT NOT NULL,
        seed INTEGER,
        condition TEXT,
        preset TEXT,
        logprobs_supported INTEGER,
        config TEXT NOT NULL,
        pid INTEGER,
        host TEXT,
        calls INTEGER NOT NULL DEFAULT 0,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        embedding_calls INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE participants (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        persona_id TEXT,
        persona TEXT,
        proactivity TEXT,
        color_index INTEGER,
        joined_at TEXT NOT NULL,
        left_at TEXT,
        PRIMARY KEY (session_id, name)
    );
    CREATE TABLE memories (
        session_id TEXT NOT NULL,
        id INTEGER NOT NULL,
        agent TEXT NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        weight REAL NOT NULL,
        created_step INTEGER NOT NULL,
        last_access INTEGER NOT NULL,
        deleted INTEGER NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (session_id, id),
        FOREIGN KEY (session_id, agent) REFERENCES participants(session_id, name) ON DELETE CASCADE
    );
    CREATE TABLE messages (
        session_id TEXT NOT NULL,
        id INTEGER NOT NULL,
        step INTEGER NOT NULL,
        speaker TEXT NOT NULL,
        speaker_kind TEXT NOT NULL,
        text TEXT NOT NULL,
        interpretation TEXT,
        turn_type TEXT,
        addressee TEXT,
        thought_id INTEGER,
        system INTEGER,
        interruption INTEGER NOT NULL DEFAULT 0,
        origin TEXT,
        posted_at TEXT NOT NULL,
        PRIMARY KEY (session_id, id),
        FOREIGN KEY (session_id, speaker) REFERENCES participants(session_id, name) ON DELETE CASCADE
    );
    CREATE TABLE thoughts (
        session_id TEXT NOT NULL,
        id INTEGER NOT NULL,
        agent TEXT NOT NULL,
        text TEXT NOT NULL,
        system INTEGER NOT NULL,
        stimuli TEXT NOT NULL,
        saliency REAL,
        score REAL,
        rating INTEGER,
        distribution TEXT,
        reasons_for TEXT,
        reasons_against TEXT,
        heuristics TEXT,
        method TEXT,
        created_step INTEGER NOT NULL,
        evaluated_step INTEGER,
        expressed_in INTEGER,
        deleted INTEGER NOT NULL DEFAULT 0,
        origin TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, id),
        FOREIGN KEY (session_id, agent) REFERENCES participants(session_id, name) ON DELETE CASCADE,
        FOREIGN KEY (session_id, expressed_in) REFERENCES messages(session_id, id)
    );
    CREATE TABLE evaluations (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        thought_id INTEGER NOT NULL,
        step INTEGER NOT NULL,
        rating INTEGER NOT NULL,
        distribution TEXT NOT NULL,
        expected REAL NOT NULL,
        silence_factor REAL NOT NULL,
        score REAL NOT NULL,
        method TEXT NOT NULL,
        retained INTEGER NOT NULL,
        reasons_for TEXT NOT NULL,
        reasons_against TEXT NOT NULL,
        heuristics TEXT,
        evaluated_at TEXT NOT NULL,
        FOREIGN KEY (session_id, thought_id) REFERENCES thoughts(session_id, id) ON DELETE CASCADE
    );
    CREATE TABLE decisions (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        step INTEGER NOT NULL,
        trigger TEXT NOT NULL,
        agent TEXT NOT NULL,
        action TEXT NOT NULL,
        thought_id INTEGER,
        score REAL,
        threshold REAL,
        turn_type TEXT,
        reason TEXT NOT NULL,
        decided_at TEXT NOT NULL,
        FOREIGN KEY (session_id, agent) REFERENCES participants(session_id, name) ON DELETE CASCADE
    );
    CREATE TABLE events (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        step INTEGER NOT NULL,
        at TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE INDEX decisions_session ON decisions(session_id, step);
    CREATE INDEX evaluations_session ON evaluations(session_id, thought_id);
    """,
    # 2: a human's private reasons/reactions and in-the-moment labels
    """
    CREATE TABLE annotations (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        message_id INTEGER NOT NULL,
        author TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('reason', 'reaction')),
        text TEXT NOT NULL,
        created_at TEXT NOT NULL,
        FOREIGN KEY (session_id, message_id) REFERENCES messages(session_id, id) ON DELETE CASCADE,
        FOREIGN KEY (session_id, author) REFERENCES participants(session_id, name) ON DELETE CASCADE
    );
    CREATE TABLE labels (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        message_id INTEGER NOT NULL,
        author TEXT NOT NULL,
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        created_at TEXT NOT NULL,
        FOREIGN KEY (session_id, message_id) REFERENCES messages(session_id, id) ON DELETE CASCADE,
        FOREIGN KEY (session_id, author) REFERENCES participants(session_id, name) ON DELETE CASCADE
    );
    """,
    # 3: replay, forks, experiments and human evaluation (ratings, marks, preferences, plans)
    """
    ALTER TABLE sessions ADD COLUMN parent_id TEXT REFERENCES sessions(id) ON DELETE SET NULL;
    ALTER TABLE sessions ADD COLUMN fork_seq INTEGER;
    ALTER TABLE sessions ADD COLUMN fork_message INTEGER;
    ALTER TABLE sessions ADD COLUMN experiment_id TEXT REFERENCES experiments(id) ON DELETE SET NULL;
    CREATE TABLE experiments (
        id TEXT PRIMARY KEY,
        name TEXT,
        created_at TEXT NOT NULL,
        config TEXT
    );
    CREATE TABLE raters (
        id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL
    );
    CREATE TABLE rating_plans (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('conversation', 'pairwise')),
        seed INTEGER NOT NULL,
        per_rater INTEGER NOT NULL,
        raters TEXT NOT NULL,
        source TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE assignments (
        id INTEGER PRIMARY KEY,
        plan_id INTEGER NOT NULL REFERENCES rating_plans(id) ON DELETE CASCADE,
        rater TEXT NOT NULL REFERENCES raters(id),
        position INTEGER NOT NULL,
        session_a TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        session_b TEXT REFERENCES sessions(id) ON DELETE CASCADE,
        completed_at TEXT,
        UNIQUE (plan_id, rater, position)
    );
    CREATE TABLE ratings (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        rater TEXT NOT NULL REFERENCES raters(id),
        instrument TEXT NOT NULL CHECK (instrument IN ('conversation', 'participant')),
        metric TEXT NOT NULL,
        value INTEGER NOT NULL CHECK (value BETWEEN 1 AND 7),
        assignment_id INTEGER REFERENCES assignments(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (session_id, rater, instrument, metric)
    );
    CREATE TABLE turn_marks (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        message_id INTEGER NOT NULL,
        rater TEXT NOT NULL REFERENCES raters(id),
        comment TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        UNIQUE (session_id, message_id, rater),
        FOREIGN KEY (session_id, message_id) REFERENCES messages(session_id, id) ON DELETE CASCADE
    );
    CREATE TABLE preferences (
        id INTEGER PRIMARY KEY,
        rater TEXT NOT NULL REFERENCES raters(id),
        first_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        second_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        chosen_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        reason TEXT NOT NULL DEFAULT '',
        assignment_id INTEGER REFERENCES assignments(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        CHECK (chosen_id IN (first_id, second_id)),
        CHECK (first_id <> second_id)
    );
    CREATE INDEX sessions_parent ON sessions(parent_id);
    CREATE INDEX sessions_experiment ON sessions(experiment_id);
    CREATE INDEX ratings_session ON ratings(session_id, rater);
    CREATE INDEX turn_marks_session ON turn_marks(session_id);
    CREATE INDEX assignments_rater ON assignments(plan_id, rater, position);
    CREATE INDEX events_kind ON events(session_id, kind, seq);
    """,
    # 4: retries and rate-limit waits per session, next to calls and tokens
    """
    ALTER TABLE sessions ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN rate_limit_waits INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN rate_limit_seconds REAL NOT NULL DEFAULT 0;
    """,
    # 5: turn-taking policies (baselines), next-speaker predictions, paired experiment runs
    """
    ALTER TABLE participants ADD COLUMN policy TEXT NOT NULL DEFAULT 'inner-thoughts';
    ALTER TABLE decisions ADD COLUMN policy TEXT NOT NULL DEFAULT 'inner-thoughts';
    ALTER TABLE decisions ADD COLUMN probability REAL;
    ALTER TABLE sessions ADD COLUMN draw INTEGER;
    CREATE TABLE predictions (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        message_id INTEGER NOT NULL,
        step INTEGER NOT NULL,
        predicted TEXT NOT NULL,
        chosen TEXT,
        rule TEXT NOT NULL DEFAULT '',
        probabilities TEXT NOT NULL,
        method TEXT NOT NULL,
        origin TEXT,
        predicted_at TEXT NOT NULL,
        PRIMARY KEY (session_id, message_id, step)
    );
    CREATE TABLE experiment_draws (
        experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        draw INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        participants TEXT NOT NULL,
        initiator TEXT NOT NULL,
        icebreaker TEXT NOT NULL,
        PRIMARY KEY (experiment_id, draw)
    );
    CREATE TABLE experiment_runs (
        experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        draw INTEGER NOT NULL,
        condition TEXT NOT NULL,
        session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (experiment_id, draw, condition)
    );
    CREATE INDEX sessions_draw ON sessions(experiment_id, draw);
    """,
    # 6: a message said because the user clicked the thought ("forced by you"), in its own row;
    # sessions recorded before are read from their event log
    """
    ALTER TABLE messages ADD COLUMN forced INTEGER NOT NULL DEFAULT 0;
    UPDATE messages SET forced = 1 WHERE EXISTS (
        SELECT 1 FROM events e
        WHERE e.session_id = messages.session_id AND e.kind = 'thought_expressed'
            AND json_extract(e.data, '$.forced') = 1
            AND json_extract(e.data, '$.message_id') = messages.id
    );
    """,
    # 7: STORM simulated users: the profile snapshot, the hidden state of every turn, the dyadic
    # runs' design, and a judge's turn-pair analysis (docs/spec.md §2)
    """
    ALTER TABLE participants ADD COLUMN profile TEXT;
    CREATE TABLE hidden_states (
        session_id TEXT NOT NULL,
        message_id INTEGER NOT NULL,
        participant TEXT NOT NULL,
        turn INTEGER NOT NULL,
        step INTEGER NOT NULL,
        inner_thoughts TEXT NOT NULL DEFAULT '',
        satisfaction REAL NOT NULL CHECK (satisfaction BETWEEN 0 AND 1),
        satisfaction_explanation TEXT NOT NULL DEFAULT '',
        satisfaction_missing INTEGER NOT NULL DEFAULT 0,
        clarity REAL NOT NULL CHECK (clarity BETWEEN 0 AND 1),
        clarity_explanation TEXT NOT NULL DEFAULT '',
        emotion TEXT NOT NULL DEFAULT '',
        intent TEXT NOT NULL DEFAULT '',
        emotion_source TEXT NOT NULL DEFAULT 'model',
        intent_source TEXT NOT NULL DEFAULT 'model',
        format TEXT NOT NULL,
        origin TEXT NOT NULL DEFAULT '',
        recorded_at TEXT NOT NULL,
        PRIMARY KEY (session_id, message_id),
        FOREIGN KEY (session_id, message_id) REFERENCES messages(session_id, id) ON DELETE CASCADE
    );
    CREATE INDEX hidden_states_participant ON hidden_states(session_id, participant, turn);
    CREATE TABLE storm_dialogues (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        experiment_id TEXT REFERENCES experiments(id) ON DELETE SET NULL,
        user_name TEXT NOT NULL,
        profile_id TEXT NOT NULL,
        category TEXT NOT NULL,
        task TEXT NOT NULL,
        difficulty INTEGER NOT NULL,
        uncertainty INTEGER NOT NULL,
        profile_access INTEGER NOT NULL,
        assistant TEXT NOT NULL,
        assistant_model TEXT NOT NULL,
        user_model TEXT NOT NULL
    );
    CREATE INDEX storm_dialogues_experiment ON storm_dialogues(experiment_id);
    CREATE TABLE storm_judgements (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        judge TEXT NOT NULL,
        pair INTEGER NOT NULL,
        clarity_change TEXT NOT NULL CHECK (clarity_change IN ('improve', 'not change', 'decrease')),
        satisfaction_change TEXT NOT NULL CHECK (satisfaction_change IN ('improve', 'not change', 'decrease')),
        explanation TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, judge, pair)
    );
    """,
    # 8: conversational geometry (TRACE) and an automatic judge: message vectors kept per
    # embedding model, features per session, and the judge's scores with their reasons
    """
    CREATE TABLE message_embeddings (
        session_id TEXT NOT NULL,
        message_id INTEGER NOT NULL,
        model TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (session_id, message_id, model),
        FOREIGN KEY (session_id, message_id) REFERENCES messages(session_id, id) ON DELETE CASCADE
    );
    CREATE TABLE session_features (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        version INTEGER NOT NULL,
        computed_at TEXT NOT NULL,
        message_count INTEGER NOT NULL,
        goal TEXT,
        features TEXT NOT NULL,
        per_speaker TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (session_id, model)
    );
    CREATE TABLE judge_scores (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        rater TEXT NOT NULL REFERENCES raters(id),
        metric TEXT NOT NULL,
        score REAL NOT NULL CHECK (score BETWEEN 1 AND 7),
        rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 7),
        reason TEXT NOT NULL DEFAULT '',
        method TEXT NOT NULL,
        model TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, rater, metric)
    );
    """,
    # 9: what each session's server was found to accept (the negotiated capability profile),
    # answers dropped or cut there, and how many sampled ratings an evaluation was estimated from
    """
    ALTER TABLE sessions ADD COLUMN server_profile TEXT;
    ALTER TABLE sessions ADD COLUMN dropped INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN cut INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE evaluations ADD COLUMN samples INTEGER;
    ALTER TABLE thoughts ADD COLUMN samples INTEGER;
    """,
    # 10: a decision's best score beside the chosen thought's (``score``), which differ when a
    # System-1 reply is drawn. Rows recorded before: ``score`` was the best score except for such
    # a draw, whose reason gives the best score as it was shown (2 decimals). And where a fork's
    # own run begins: how many messages it carried over (for older forks, up to ``fork_message``:
    # exact unless a participant had left before the fork moment).
    """
    ALTER TABLE sessions ADD COLUMN fork_messages INTEGER;
    UPDATE sessions SET fork_messages = (
            SELECT COUNT(*) FROM messages m
            WHERE m.session_id = sessions.id AND m.id <= sessions.fork_message
        )
        WHERE fork_message IS NOT NULL;
    ALTER TABLE decisions ADD COLUMN best_score REAL;
    UPDATE decisions SET best_score = CASE
            WHEN reason LIKE 'best score % < imThreshold %; System-1 reply drawn%'
            THEN CAST(substr(reason, 12, instr(reason, ' < ') - 12) AS REAL)
            ELSE score
        END
        WHERE policy = 'inner-thoughts' AND score IS NOT NULL;
    """,
    # 11: people taking part from their browsers (playground.storage.seats)
    SEATS_MIGRATION,
    # 12: retrospective review, questionnaires and study plans (playground.storage.study_rows)
    STUDY_MIGRATION,
    # 13: the runner holding a study plan, and the names its agents were shown under
    RUNNER_MIGRATION,
    # 14: raters from their own browsers (playground.storage.rater_rows)
    RATER_MIGRATION,
    # 15: a person's or simulated user's row says what they are, not a policy they never had;
    # everyone still seated when a session ended left then
    """
    UPDATE participants SET policy = kind WHERE kind IN ('human', 'simulated');
    UPDATE participants SET left_at = (
            SELECT s.finished_at FROM sessions s WHERE s.id = participants.session_id
        )
        WHERE left_at IS NULL AND EXISTS (
            SELECT 1 FROM sessions s
            WHERE s.id = participants.session_id AND s.status != 'running'
                AND s.finished_at IS NOT NULL
        );
    """,
]
