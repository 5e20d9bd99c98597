"""The ranking keeps no data of its own: it changes the games', the boards', the leagues'
and the races' (ranking.actions). A models module, so that its jobs are scheduled after
`migrate` as every app's are."""
