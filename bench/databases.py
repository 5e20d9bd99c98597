"""The benches' PostgreSQL databases: each bench names its own in `DATABASE_URL` and
creates it on first use, so a bench runs on a fresh server."""

from __future__ import annotations

import sys
from typing import Any

import dj_database_url
import psycopg


def admin_connection(url: str) -> tuple[psycopg.Connection[Any], str]:
    """A connection to the server's `postgres` database, and the name of `url`'s own
    (the benches create and drop theirs with it)."""
    config = dj_database_url.parse(url)
    if config["ENGINE"] != "django.db.backends.postgresql":
        sys.exit("this benchmark needs PostgreSQL: set DATABASE_URL=postgres://...")
    admin = psycopg.connect(
        host=config["HOST"] or None,
        port=config["PORT"] or None,
        user=config["USER"] or None,
        password=config["PASSWORD"] or None,
        dbname="postgres",
        autocommit=True,
    )
    return admin, str(config["NAME"])


def ensure_database(url: str) -> None:
    """Create the database `url` names if it does not exist."""
    admin, name = admin_connection(url)
    with admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            admin.execute(f'CREATE DATABASE "{name}"')
