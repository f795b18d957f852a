--- Late replies (behavior.md L1–L7): answers sent with `userQuestions/answer`.
---
--- Two ways lead here: :AskbridgeAnswer asks a continued question again
--- (`M.answer`), and a card whose request ended while the user was still
--- choosing — its countdown reached zero or the server withdrew it while a
--- blocking picker (the builtin inputlist) could not be closed — sends what
--- the user chose as a late reply (`M.send`, from ask.lua). A timer never
--- loses an answer (L7): the server takes it when the question is continued.
---
--- The reply waits (at most `OPEN_WAIT_MS`) until our view no longer shows
--- the call "open": a reply sent before the server has turned the question
--- pending would be refused (L1). Outcomes are told to the user:
---   true          the reply is queued for the agent (L4);
---   false         the question is no longer answerable: answered elsewhere
---                 (settled in our view: another window answered first, M5/L6)
---                 or its turn was cancelled (L1);
---   REPLY_QUEUED  another reply is already queued (L2, M5);
---   other errors  the server's message (BAD_ANSWER …).
--- Fires `User AskbridgeAnswered` (data = {session_id, call_id, accepted, error?}).

local card_mod = require('askbridge.card')
local client_mod = require('askbridge.client')
local notify = require('askbridge.notify')
local views = require('askbridge.views')

local M = {}

--- How long a late reply waits for the server to turn its question pending.
M.OPEN_WAIT_MS = 5000

local function error_code(err)
  return type(err) == 'table' and type(err.data) == 'table' and err.data.code or nil
end

local function tell(entry, accepted, err, late)
  local call = entry.call_id
  if err and error_code(err) == 'REPLY_QUEUED' then
    notify.warn(('a reply to %s is already queued for the agent: yours was not sent'):format(call))
  elseif err then
    notify.warn(('reply to %s refused: %s'):format(call, tostring(err.message or err)))
  elseif accepted and late then
    notify.info(
      ('%s was no longer waiting on screen: your answer was sent as a late reply'):format(call)
    )
  elseif accepted then
    notify.info('reply sent for ' .. call)
  elseif views.state_of(entry.session_id, call) == 'settled' then
    notify.warn(('%s was already answered elsewhere: your answer was not sent'):format(call))
  else
    notify.warn(
      ('%s is no longer waiting for a reply (answered elsewhere or its turn ended): '):format(call)
        .. 'your answer was not sent'
    )
  end
end

--- Sends `answers` as the late reply of `entry` ({session_id, call_id}).
--- @param late boolean? the answer was chosen on a card whose request had ended
function M.send(entry, answers, late)
  views.when_not_open(entry.session_id, entry.call_id, M.OPEN_WAIT_MS, function()
    client_mod.call('userQuestions/answer', {
      sessionId = entry.session_id,
      callId = entry.call_id,
      answer = { answers = answers },
    }, function(err, accepted)
      accepted = not err and accepted == true
      vim.api.nvim_exec_autocmds('User', {
        pattern = 'AskbridgeAnswered',
        modeline = false,
        data = {
          session_id = entry.session_id,
          call_id = entry.call_id,
          accepted = accepted,
          error = err,
        },
      })
      tell(entry, accepted, err, late)
    end)
  end)
end

--- Shows `entry`'s questions and sends the late reply.
function M.answer_entry(entry)
  coroutine.wrap(function()
    local card = card_mod.new({
      session_id = entry.session_id,
      call_id = entry.call_id,
      questions = entry.questions,
      timed = false,
    })
    local answers = require('askbridge.question').ask_all(card)
    card:finish()
    if answers then
      M.send(entry, answers, false)
    end -- dismissed: the question stays answerable
  end)()
end

--- :AskbridgeAnswer [callId] — picks a continued question (the only one, the
--- named one, or through vim.ui.select) and answers it late.
--- @param call_id string?
function M.answer(call_id)
  views.refresh(function()
    local entries = views.continued()
    if call_id and call_id ~= '' then
      entries = vim.tbl_filter(function(entry)
        return entry.call_id == call_id
      end, entries)
    end
    if #entries == 0 then
      notify.warn('no continued question to answer')
      return
    elseif #entries == 1 then
      M.answer_entry(entries[1])
      return
    end
    vim.ui.select(entries, {
      prompt = 'Answer which question?',
      format_item = views.describe,
      kind = 'askbridge.pending',
    }, function(entry)
      if entry then
        M.answer_entry(entry)
      end
    end)
  end)
end

return M
