"""What ranks a game, in one place: the actions that store, void, clear, ban, lift a
ban and delete, each calling every store it changes (`actions`), and their doors
(the submission API, the account's deletion, the moderators' admin, the boards'
check). Above games, the boards, the leagues and the races, which import
nothing of it."""
