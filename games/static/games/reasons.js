// Generated from games/rules/errors.py by `make catalogue`: do not edit by hand.
/**
 * English template of every refusal, keyed by the engine's stable reason code
 * and filled from the named fields of the error (`params`). The pages
 * translate by code.
 */
export const REASONS = {
  "column_refuses": "{card} does not go on {target}: a card goes on the next higher rank of the other colour",
  "empty_source": "there is no card to move: {source} is empty",
  "empty_stock_and_waste": "the stock and the waste are both empty",
  "foundation_refuses": "F{foundation} does not accept {card}: it takes the {suit} from the ace up, one at a time",
  "foundation_to_foundation": "no card moves from one foundation to another",
  "game_over": "the game is won; no action is accepted after that",
  "king_only": "an empty column accepts only a king, or a run that starts with a king",
  "no_foundation_accepts": "no foundation accepts {card}",
  "nothing_to_undo": "there is nothing left to undo (undo takes back at most the last 100 actions)",
  "one_card_at_a_time": "only the top card moves between columns; a run moves as a block only when it starts with a king and goes to an empty column",
  "run_only_to_empty": "{card} heads a run, and a king-headed run moves only to an empty column",
  "same_column": "a card cannot move to the column it is already in",
  "unreadable_action": "this is not an action: write S, U or a move such as 37, W3, WF, 3F2 or F27",
  "waste_is_not_a_destination": "nothing can be put on the waste"
};
