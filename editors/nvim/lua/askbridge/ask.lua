--- Handler of the server's `userQuestions/ask` request (protocol.md).
---
--- It runs inside the transport's coroutine: it opens a card, claims the
--- timed wait when `wait.timed` (claims.lua), asks every question
--- (question.lua) and returns the Answer — or a JSON-RPC error:
---   ASK_CANCELLED  the user dismissed the card;
---   ASK_TIMED_OUT  the local countdown of a timed card reached zero.
--- When the server withdraws the request ($/cancelRequest) the transport has
--- already replied -32800; the card is closed and whatever we return is dropped.

local card_mod = require('askbridge.card')
local claims = require('askbridge.claims')
local config = require('askbridge.config')
local question = require('askbridge.question')
local transport = require('askbridge.transport')

local M = {}

-- The server replaces these messages with the fixed ones of behavior.md (E2);
-- they are what a person reading a log sees.
local MESSAGES = {
  ASK_CANCELLED = 'the user cancelled ask_user_question',
  ASK_TIMED_OUT = 'ask_user_question timed out before the user answered',
}

--- A domain error reply (protocol.md Errors).
--- @param code "ASK_CANCELLED"|"ASK_TIMED_OUT"
function M.user_question_error(code)
  return {
    code = -32000,
    message = MESSAGES[code],
    data = { name = 'UserQuestionError', code = code },
  }
end

--- Asks the card's questions and turns the outcome into a reply.
--- @param card askbridge.Card
--- @return table? result, table? error
function M.run_card(card)
  local answers, reason = question.ask_all(card)
  card:finish()
  if answers then
    return { answers = answers }
  elseif reason == 'cancelled' then
    return nil, M.user_question_error('ASK_CANCELLED')
  elseif reason == 'timed_out' then
    return nil, M.user_question_error('ASK_TIMED_OUT')
  end
  return nil, { code = -32800, message = 'Request cancelled' }
end

--- vim.lsp handler for `userQuestions/ask`.
function M.handle(_, params, ctx)
  local request = transport.current_request()
  require('askbridge.views').remember_session(params.sessionId)
  local co, is_main = coroutine.running()
  if not co or is_main then
    return nil,
      { code = -32603, message = 'askbridge: userQuestions/ask must be handled in a coroutine' }
  end
  local wait = params.wait or {}
  local card = card_mod.new({
    session_id = params.sessionId,
    call_id = wait.callId,
    questions = params.questions or {},
    timed = wait.timed == true,
  })
  if request then
    transport.on_cancel(request, function(why)
      card:close(why == 'exited' and 'server_exited' or 'server_cancelled')
    end)
  end
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if card.timed and wait.callId and client then
    claims.claim(card, client, config.options.claim_wait_ms)
  end
  -- Answer first, then release the claim: a release after the deadline would
  -- expire the wait (TW5) before our answer arrived.
  local result, err = M.run_card(card)
  if client and card.claim then
    local claimed = card
    vim.schedule(function()
      claims.release(claimed)
    end)
  end
  return result, err
end

return M
