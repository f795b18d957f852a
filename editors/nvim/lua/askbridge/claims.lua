--- Claims on timed waits (protocol.md `userQuestions/attachWait`, behavior.md C1–C5).
---
--- While a timed card is on screen we hold a claim, so the server's timer
--- stops (TW5) and the question cannot turn pending under the user's eyes;
--- instead the card counts down locally from the `remainingMs` of the claim's
--- one `$/progress` frame and, at zero, replies ASK_TIMED_OUT (TW7). The
--- claim is the open `attachWait` request: we release it by cancelling that
--- request (`$/cancelRequest`), and the server answers it `null` when the
--- wait ends by itself.

local client_mod = require('askbridge.client')

local M = {}

--- @type table<string, askbridge.Card> cards by partialResultToken
local by_token = {}
local next_token = 0

--- Handles a `$/progress` notification. Returns true when it was a claim frame.
function M.on_progress(params)
  local card = params and by_token[params.token]
  if not card then
    return false
  end
  local value = params.value
  if type(value) == 'table' and type(value.remainingMs) == 'number' then
    card.claim.frame = value
    card:start_countdown(value.remainingMs)
    if card.claim.on_frame then
      card.claim.on_frame()
    end
  end
  return true
end

--- Claims the card's wait and waits (yielding) for the first frame, the end of
--- the claim, or `wait_ms`, whichever comes first.
--- @param card askbridge.Card
--- @param client vim.lsp.Client
--- @param wait_ms integer
function M.claim(card, client, wait_ms)
  next_token = next_token + 1
  local token = ('askbridge-claim-%d'):format(next_token)
  local claim = { token = token, client = client, id = nil, ended = false }
  card.claim = claim
  by_token[token] = card
  local ok, id = client_mod.request(client, 'userQuestions/attachWait', {
    sessionId = card.session_id,
    callId = card.call_id,
    partialResultToken = token,
  }, function(err)
    -- null: the wait ended (or never existed: C1/C2); an error: no claim either.
    claim.ended = true
    claim.error = err
    by_token[token] = nil
    if claim.on_frame then
      claim.on_frame()
    end
  end)
  if not ok then
    by_token[token] = nil
    claim.ended = true
    return
  end
  claim.id = id
  if claim.frame or claim.ended then
    return
  end
  card:await(function(done)
    claim.on_frame = function()
      claim.on_frame = nil
      done(true)
    end
    vim.defer_fn(function()
      if claim.on_frame then
        claim.on_frame = nil
        done(false)
      end
    end, wait_ms)
  end, false)
end

--- Releases the card's claim if it still holds one.
--- @param card askbridge.Card
function M.release(card)
  local claim = card.claim
  if not claim then
    return
  end
  card.claim = nil
  by_token[claim.token] = nil
  if not claim.ended and claim.id then
    claim.ended = true
    client_mod.cancel_request(claim.client, claim.id)
  end
end

--- Forgets every claim (the server is gone).
function M.drop_all()
  by_token = {}
end

return M
