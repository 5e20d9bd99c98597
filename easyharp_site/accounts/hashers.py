"""The password hasher of this service: Argon2id with parameters chosen for it.

A sign-up or log-in hashes one password, the costliest thing a visitor can make
the server do. Django's Argon2 defaults (t=2, 100 MiB, 8 lanes) cost about as
much CPU as PBKDF2's million iterations and 100 MiB per hash in flight; OWASP's
equal-strength setting of 19 MiB, 2 passes, 1 lane costs a fraction of that
CPU and a fifth of the memory (docs/RELIABILITY.md). One lane: a server
hashes many passwords at once, one per request, so threads inside one hash
only compete with the others.

Django rehashes a password at the next log-in whenever the stored hash was
made by another hasher or with other parameters, so a change here reaches
every active player without a migration.
"""

from __future__ import annotations

from django.contrib.auth.hashers import Argon2PasswordHasher


class ServiceArgon2PasswordHasher(Argon2PasswordHasher):
    """Argon2id, 19 MiB, 2 passes, 1 lane (OWASP's first recommendation)."""

    time_cost = 2
    memory_cost = 19 * 1024  # KiB
    parallelism = 1
