--- Handler of the server's `userQuestions/ask` request (protocol.md).
---
--- It runs inside the transport's coroutine: it opens a card, claims the
--- timed wait when `wait.timed` (claims.lua), asks every question
--- (question.lua) and replies with the Answer — or a JSON-RPC error:
---   ASK_CANCELLED  the user dismissed the card;
---   ASK_TIMED_OUT  the local countdown of a timed card reached zero. This
---                  reply is sent the moment it happens (`card.on_close`),
---                  not when the coroutine returns: a blocking picker may
---                  still hold the coroutine, and the server must not wait.
--- When the server withdraws the request ($/cancelRequest) the transport has
--- already replied -32800; the card is closed and the user told why, as far
--- as our copy of the session's view says within `WHY_WAIT_MS` (the server
--- withdraws the other windows' cards first and settles the call after):
--- settled — answered elsewhere (another window or client answered first,
--- M2); continued — its wait ended, it stays answerable late; removed — its
--- turn was cancelled. A blocking ask has no call id to look up.
---
--- A request answers once, and never with an error the user did not cause: a
--- choice made after the card's request ended (only possible with a picker
--- that cannot be closed, the builtin inputlist) is sent as a late reply with
--- `userQuestions/answer` (replies.lua, L7), or — for a blocking ask, which has
--- no call to reply to — the user is told it was not sent.

local card_mod = require('askbridge.card')
local claims = require('askbridge.claims')
local config = require('askbridge.config')
local notify = require('askbridge.notify')
local question = require('askbridge.question')
local transport = require('askbridge.transport')

local M = {}

-- The server replaces these messages with the fixed ones of behavior.md (E2);
-- they are what a person reading a log sees.
local MESSAGES = {
  ASK_CANCELLED = 'the user cancelled ask_user_question',
  ASK_TIMED_OUT = 'ask_user_question timed out before the user answered',
}

local CANCELLED = { code = -32800, message = 'Request cancelled' }

--- How long a withdrawn card waits for the didChange that says why.
M.WHY_WAIT_MS = 1500

--- Why a withdrawn card was closed, by the call's state in our view.
local WITHDRAWN = {
  settled = 'answered elsewhere (in another window or client)',
  continued = 'no longer waiting on screen; it stays answerable with :AskbridgeAnswer',
  removed = 'no longer needed (its turn was cancelled or ended)',
}
local WITHDRAWN_UNKNOWN = 'answered elsewhere or no longer needed'

--- A domain error reply (protocol.md Errors).
--- @param code "ASK_CANCELLED"|"ASK_TIMED_OUT"
function M.user_question_error(code)
  return {
    code = -32000,
    message = MESSAGES[code],
    data = { name = 'UserQuestionError', code = code },
  }
end

--- How the user knows the card: its call id, or its first question.
local function name_of(card)
  if card.call_id then
    return card.call_id
  end
  local first = card.questions[1] or {}
  return ('"%s"'):format(first.question or '?')
end

--- Releases the card's claim after whatever reply is being sent now (a release
--- before the reply could expire the wait before our answer arrived, TW5).
local function release_claim_later(card)
  if card.claim then
    vim.schedule(function()
      claims.release(card)
    end)
  end
end

--- Tells the user that the server withdrew the card, and why once the view says.
local function tell_withdrawn(card)
  local function say(state)
    local why = WITHDRAWN[state] or WITHDRAWN_UNKNOWN
    notify.warn(('the question %s was closed: %s'):format(name_of(card), why))
  end
  if not card.call_id then
    say(nil)
    return
  end
  require('askbridge.views').when_state(card.session_id, card.call_id, function(state)
    return WITHDRAWN[state] ~= nil
  end, M.WHY_WAIT_MS, say)
end

--- What happens the moment the card's request ends without our answer.
local function on_close(card, request, reason)
  if reason == 'timed_out' and request then
    transport.respond(request, M.user_question_error('ASK_TIMED_OUT'))
  end
  release_claim_later(card)
  if card.late then
    return -- a blocking picker is up: the user hears about it after choosing
  elseif reason == 'timed_out' then
    notify.info(
      ('%s timed out and is pending for the agent: :AskbridgeAnswer replies later'):format(
        name_of(card)
      )
    )
  elseif reason == 'server_cancelled' then
    tell_withdrawn(card)
  end
end

--- The choice made on a card whose request had ended: a late reply, or a word why not.
local function send_late(card, answers)
  if not card.call_id then
    notify.warn(
      ('the question %s was withdrawn before you answered: your answer was not sent'):format(
        name_of(card)
      )
    )
  elseif not require('askbridge.client').get() then
    notify.warn(('the server stopped: your answer to %s was not sent'):format(name_of(card)))
  else
    require('askbridge.replies').send(
      { session_id = card.session_id, call_id = card.call_id },
      answers,
      true
    )
  end
end

--- Asks the card's questions and turns the outcome into a reply.
--- @param card askbridge.Card
--- @return table? result, table? error
function M.run_card(card)
  local answers, reason = question.ask_all(card)
  card:finish()
  if card.late then
    if answers then
      send_late(card, answers)
    end
    return nil, CANCELLED -- the request was answered already: dropped by the transport
  elseif answers then
    return { answers = answers }
  elseif reason == 'cancelled' then
    return nil, M.user_question_error('ASK_CANCELLED')
  elseif reason == 'timed_out' then
    return nil, M.user_question_error('ASK_TIMED_OUT')
  end
  return nil, CANCELLED
end

--- vim.lsp handler for `userQuestions/ask`.
function M.handle(_, params, ctx)
  local request = transport.current_request()
  require('askbridge.views').remember_session(params.sessionId)
  require('askbridge.session').flush_text(params.sessionId) -- the lead-in comes first
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
  card.on_close = function(reason)
    on_close(card, request, reason)
  end
  if request then
    transport.on_cancel(request, function(why)
      card:close(why == 'exited' and 'server_exited' or 'server_cancelled')
    end)
  end
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if card.timed and wait.callId and client then
    claims.claim(card, client, config.options.claim_wait_ms)
  end
  local result, err = M.run_card(card)
  release_claim_later(card)
  return result, err
end

return M
