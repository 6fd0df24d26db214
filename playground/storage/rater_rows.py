"""Raters who work from their own browsers: one link per rater of a rating plan, a plan's open
link for a crowdsourcing platform, completion codes, and how far each rater has read."""

from __future__ import annotations

#: Migration 14 (:data:`playground.storage.schema.MIGRATIONS`): each rater's link of a plan (its
#: token; when the open link handed it out and when its page first connected; the completion
#: code once every
#: assignment is done), the plan's open link, and how many messages of each conversation of an
#: assignment the rater has been shown (so a reload resumes where they left off).
MIGRATION = """
    CREATE TABLE rater_links (
        plan_id INTEGER NOT NULL REFERENCES rating_plans(id) ON DELETE CASCADE,
        rater TEXT NOT NULL REFERENCES raters(id),
        token TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        claimed_at TEXT,
        opened_at TEXT,
        code TEXT,
        finished_at TEXT,
        PRIMARY KEY (plan_id, rater)
    );
    CREATE TABLE rating_open_links (
        plan_id INTEGER NOT NULL UNIQUE REFERENCES rating_plans(id) ON DELETE CASCADE,
        token TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL
    );
    CREATE TABLE rater_reads (
        assignment_id INTEGER NOT NULL REFERENCES assignments(id) ON DELETE CASCADE,
        part INTEGER NOT NULL CHECK (part IN (0, 1)),
        shown INTEGER NOT NULL CHECK (shown >= 0),
        PRIMARY KEY (assignment_id, part)
    );
"""
