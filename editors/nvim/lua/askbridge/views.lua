--- Continued (pending) questions and late replies.
---
--- The server pushes each session's projection view (behavior.md V7) with
--- `userQuestions/didChange`; we keep the latest one per session. A question
--- in state "continued" returned pending to the model but is still
--- answerable: `:AskbridgePending` lists them and `:AskbridgeAnswer` asks one
--- again with the same pickers and sends `userQuestions/answer` (L1–L6); an
--- accepted reply wakes the agent into a new turn.
---
--- Fires `User AskbridgeDidChange` (data = {session_id, view}) on every view
--- and `User AskbridgeAnswered` (data = {session_id, call_id, accepted,
--- error?}) after a late reply.

local card_mod = require('askbridge.card')
local client_mod = require('askbridge.client')

local M = {}

--- @type table<string, table> latest view by session id
M.views = {}

--- Sessions this Neovim has seen, so :AskbridgePending can refresh them.
--- @type table<string, boolean>
M.sessions = {}

local function fire(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, modeline = false, data = data })
end

function M.remember_session(session_id)
  if session_id then
    M.sessions[session_id] = true
  end
end

--- vim.lsp handler for the `userQuestions/didChange` notification.
function M.on_did_change(_, params)
  if type(params) ~= 'table' or not params.sessionId or type(params.view) ~= 'table' then
    return
  end
  M.remember_session(params.sessionId)
  M.views[params.sessionId] = params.view
  fire('AskbridgeDidChange', { session_id = params.sessionId, view = params.view })
end

--- Continued questions of every known session, in each view's ask order.
--- @return {session_id: string, call_id: string, questions: table[]}[]
function M.continued()
  local entries = {}
  local session_ids = vim.tbl_keys(M.views)
  table.sort(session_ids)
  for _, session_id in ipairs(session_ids) do
    for _, active in ipairs(M.views[session_id].active or {}) do
      if active.state == 'continued' then
        table.insert(entries, {
          session_id = session_id,
          call_id = active.callId,
          questions = active.questions or {},
        })
      end
    end
  end
  return entries
end

--- Asks the server for the view of every known session (`userQuestions/list`),
--- then calls `done()`.
function M.refresh(done)
  local session_ids = vim.tbl_keys(M.sessions)
  local remaining = #session_ids
  if remaining == 0 then
    done()
    return
  end
  for _, session_id in ipairs(session_ids) do
    client_mod.call('userQuestions/list', { sessionId = session_id }, function(err, view)
      if not err and type(view) == 'table' then
        M.views[session_id] = view
      end
      remaining = remaining - 1
      if remaining == 0 then
        done()
      end
    end)
  end
end

--- One line per continued question, for :AskbridgePending.
function M.describe(entry)
  local first = entry.questions[1] or {}
  local text = first.question or '?'
  if first.header and first.header ~= '' then
    text = ('[%s] %s'):format(first.header, text)
  end
  if #entry.questions > 1 then
    text = ('%s (+%d more)'):format(text, #entry.questions - 1)
  end
  return ('%s  %s  %s'):format(entry.session_id, entry.call_id, text)
end

--- :AskbridgePending — refreshes and echoes the continued questions.
function M.show_pending()
  M.refresh(function()
    local entries = M.continued()
    if #entries == 0 then
      vim.notify('askbridge: no continued questions', vim.log.levels.INFO)
      return
    end
    local header = 'askbridge: %d continued question(s) — :AskbridgeAnswer to reply'
    local lines = { header:format(#entries) }
    for _, entry in ipairs(entries) do
      table.insert(lines, '  ' .. M.describe(entry))
    end
    vim.notify(table.concat(lines, '\n'), vim.log.levels.INFO)
  end)
end

local function finish(entry, accepted, err)
  fire('AskbridgeAnswered', {
    session_id = entry.session_id,
    call_id = entry.call_id,
    accepted = accepted,
    error = err,
  })
  if err then
    vim.notify('askbridge: reply refused: ' .. tostring(err.message or err), vim.log.levels.WARN)
  elseif accepted then
    vim.notify('askbridge: reply sent for ' .. entry.call_id, vim.log.levels.INFO)
  else
    vim.notify(
      'askbridge: ' .. entry.call_id .. ' is no longer waiting for a reply',
      vim.log.levels.WARN
    )
  end
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
    if not answers then
      return -- dismissed: the question stays answerable
    end
    client_mod.call('userQuestions/answer', {
      sessionId = entry.session_id,
      callId = entry.call_id,
      answer = { answers = answers },
    }, function(err, accepted)
      finish(entry, accepted == true, err)
    end)
  end)()
end

--- :AskbridgeAnswer [callId] — picks a continued question (the only one, the
--- named one, or through vim.ui.select) and answers it late.
--- @param call_id string?
function M.answer(call_id)
  M.refresh(function()
    local entries = M.continued()
    if call_id and call_id ~= '' then
      entries = vim.tbl_filter(function(entry)
        return entry.call_id == call_id
      end, entries)
    end
    if #entries == 0 then
      vim.notify('askbridge: no continued question to answer', vim.log.levels.WARN)
      return
    elseif #entries == 1 then
      M.answer_entry(entries[1])
      return
    end
    vim.ui.select(entries, {
      prompt = 'Answer which question?',
      format_item = M.describe,
      kind = 'askbridge.pending',
    }, function(entry)
      if entry then
        M.answer_entry(entry)
      end
    end)
  end)
end

return M
