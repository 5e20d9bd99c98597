"""Accounts: sign-up, sign-in, API tokens, e-mail addresses, passwords, sessions, deletion.

Players are Django's own users with a DRF token each. The writes live in
`services` (sign-up, credentials), `emails` (an address confirmed by a link),
`passwords` (change, reset by e-mail), `sessions` (sign out everywhere, a new
API token) and `deletion` (erase a player, reserve the name); `selectors`
reads, `mail` sends from threads after commit, and `live` closes the open
sockets of sessions that end. `api` and `web` are the JSON
and HTML doors to them. Accounts sit below games and leaderboards and import
neither: deleting an account (`ranking.actions.player_delete`, with its
doors in `ranking.api` and `ranking.web`) erases it here, then takes the
player's games off the boards above.
"""
