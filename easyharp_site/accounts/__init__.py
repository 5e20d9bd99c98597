"""Accounts: sign-up, sign-in and API tokens, shared by every app and page.

Players are Django's own users with a DRF token each; `services` writes them,
`api` and `web` are the JSON and HTML doors to the same services.
"""
