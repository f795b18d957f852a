--- One card prompts at a time.
---
--- A question that arrives while another card is on screen waits for it, so
--- two pickers never stack: with the builtin (blocking) vim.ui.select the
--- second one would open inside the first one's inputlist, and the user would
--- answer them in the wrong order. Cards take the screen before their first
--- prompt and give it back when they finish (or are closed while not late);
--- the next waiting card, first come first served, gets it.

local M = {}

--- @type askbridge.Card?
local owner = nil
--- @type {card: askbridge.Card, waiting: table, done: fun(value: any)}[]
local queue = {}

--- Waits (yielding the card's coroutine) until the screen is free, then holds it.
--- Returns true, or `nil, reason` when the card is closed while it waits.
--- @param card askbridge.Card
function M.take(card)
  if owner == nil or owner == card then
    owner = card
    return true
  end
  local ok, why = card:await(function(done)
    table.insert(queue, { card = card, waiting = card.waiting, done = done })
  end, false)
  return ok, why
end

--- Gives the screen back if `card` holds it; the next live waiting card gets it.
--- @param card askbridge.Card
function M.release(card)
  if owner ~= card then
    return
  end
  owner = nil
  while #queue > 0 do
    local next_up = table.remove(queue, 1)
    if next_up.card:live() and next_up.card.waiting == next_up.waiting then
      owner = next_up.card -- reserved now: nobody may take it before that card resumes
      next_up.done(true)
      return
    end
  end
end

--- The card on screen, if any.
function M.owner()
  return owner
end

return M
