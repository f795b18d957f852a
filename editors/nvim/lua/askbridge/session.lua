--- Driving agent sessions from Neovim: `session/new`, `session/list`,
--- `session/load`, `session/prompt`, `session/cancel`, and the
--- `session/update` notifications (protocol.md "Sessions").
---
--- `M.current` is the session :AskbridgePrompt talks to (the last one created
--- or loaded). Agent text is collected per turn and shown with vim.notify when
--- the turn ends (option notify_agent_messages): chunks of one message are
--- joined as they come, separate messages (a tool call, a user message in
--- between) are separated by a blank line. Every update also fires
--- `User AskbridgeSessionUpdate` (data = the notification's params).
---
--- :AskbridgeSessions lists the stored sessions (newest first) in a picker and
--- loads the chosen one: its continued questions can then be answered
--- (:AskbridgeAnswer). Before `session/load` our copy of its view is dropped,
--- since the load's first didChange brings every active entry again; after it
--- the whole view is fetched (`userQuestions/list`) to say how many wait.

local client_mod = require('askbridge.client')
local config = require('askbridge.config')
local notify = require('askbridge.notify')
local views = require('askbridge.views')

local M = {}

--- @type string?
M.current = nil

--- Agent text of the running turn by session id: {parts, break_before_next}.
local turn_text = {}

--- Prompts of ours still waiting for their answer, by session id. A failed turn is told
--- once: by its prompt's error reply to the window that prompted, else (another window's
--- prompt, a turn a late reply woke) by the `error` of its turn_ended.
local prompting = {}

--- Creates a session; `callback(err, session_id)`.
--- @param opts {cwd?: string, model?: table, askUserQuestion?: table}?
function M.new(opts, callback)
  opts = opts or {}
  local params = { cwd = opts.cwd or vim.fn.getcwd() }
  params.model = opts.model
  params.askUserQuestion = opts.askUserQuestion
  client_mod.call('session/new', params, function(err, result)
    if err then
      callback(err, nil)
      return
    end
    M.current = result.sessionId
    views.remember_session(result.sessionId)
    callback(nil, result.sessionId)
  end)
end

--- The stored root sessions; `callback(err, sessions)` with
--- `{session_id, created_at, title?}` oldest first, as the server lists them.
function M.list(callback)
  client_mod.call('session/list', {}, function(err, result)
    if err then
      callback(err, nil)
      return
    end
    local sessions = {}
    for _, entry in ipairs(type(result) == 'table' and result.sessions or {}) do
      table.insert(sessions, {
        kind = 'session',
        session_id = entry.sessionId,
        created_at = entry.createdAt,
        title = entry.title,
      })
    end
    callback(nil, sessions)
  end)
end

--- Loads a stored session (`session/load`), makes it current and fetches its
--- view; `callback(err, continued_count)`.
function M.load(session_id, callback)
  views.forget(session_id)
  client_mod.call('session/load', { sessionId = session_id }, function(err)
    if err then
      callback(err, nil)
      return
    end
    M.current = session_id
    views.remember_session(session_id)
    views.refresh(function()
      local count = 0
      for _, entry in ipairs(views.continued()) do
        if entry.session_id == session_id then
          count = count + 1
        end
      end
      callback(nil, count)
    end)
  end)
end

--- One picker line per stored session.
function M.describe(entry)
  local created = tostring(entry.created_at or '?'):gsub('T', ' '):gsub('%.%d+Z$', 'Z')
  local text = ('%s  %s  %s'):format(entry.session_id, created, entry.title or '(untitled)')
  if entry.session_id == M.current then
    text = text .. '  (current)'
  end
  return text
end

--- :AskbridgeSessions — picks a stored session and loads it.
function M.pick()
  M.list(function(err, sessions)
    if err then
      notify.report(err)
      return
    elseif #sessions == 0 then
      notify.info('no stored sessions')
      return
    end
    local newest_first = {}
    for i = #sessions, 1, -1 do
      table.insert(newest_first, sessions[i])
    end
    vim.ui.select(newest_first, {
      prompt = 'Load which askbridge session?',
      format_item = M.describe,
      kind = 'askbridge.session',
    }, function(entry)
      if not entry then
        return
      end
      M.load(entry.session_id, function(load_err, count)
        if load_err then
          notify.report(load_err)
        elseif count > 0 then
          notify.info(
            ('loaded session %s: %s, :AskbridgeAnswer to reply'):format(
              entry.session_id,
              notify.plural(count, 'continued question')
            )
          )
        else
          notify.info(('loaded session %s: no continued questions'):format(entry.session_id))
        end
      end)
    end)
  end)
end

--- Sends a prompt to `session_id` (default: the current session, created first
--- when there is none); `callback(err, stop_reason, session_id)` when its turn ends.
function M.prompt(text, callback, session_id)
  local function send(id)
    prompting[id] = (prompting[id] or 0) + 1
    client_mod.call('session/prompt', {
      sessionId = id,
      prompt = { { type = 'text', text = text } },
    }, function(err, result)
      prompting[id] = math.max(0, (prompting[id] or 1) - 1)
      callback(err, result and result.stopReason, id)
    end)
  end
  local id = session_id or M.current
  if id then
    send(id)
    return
  end
  M.new(nil, function(err, new_id)
    if err then
      callback(err, nil, nil)
    else
      send(new_id)
    end
  end)
end

--- Cancels the running turn of `session_id` (default: the current session).
function M.cancel(session_id)
  local id = session_id or M.current
  if not id then
    return false
  end
  local client = client_mod.get()
  if not client then
    return false
  end
  return client_mod.notify(client, 'session/cancel', { sessionId = id })
end

local function collect(id, kind, update)
  local text = turn_text[id] or { parts = {}, break_before_next = false }
  turn_text[id] = text
  if kind == 'agent_message_chunk' then
    local chunk = type(update.content) == 'table' and update.content.text
    if type(chunk) == 'string' and chunk ~= '' then
      if text.break_before_next and #text.parts > 0 then
        table.insert(text.parts, '\n\n')
      end
      text.break_before_next = false
      table.insert(text.parts, chunk)
    end
  else
    text.break_before_next = true -- a tool call or a message ends the agent's message
  end
end

--- Says the agent's text so far in `session_id`'s turn, once, and forgets it: a
--- question's lead-in ("Let me ask…") is read before the question, not after it at the
--- turn's end.
function M.flush_text(session_id)
  local text = vim.trim(table.concat(turn_text[session_id] and turn_text[session_id].parts or {}))
  if turn_text[session_id] then
    turn_text[session_id] = { parts = {}, break_before_next = false }
  end
  if config.options.notify_agent_messages and text ~= '' then
    notify.info(text)
  end
end

--- vim.lsp handler for `session/update`.
function M.on_update(_, params)
  if type(params) ~= 'table' or type(params.update) ~= 'table' then
    return
  end
  local id, update = params.sessionId, params.update
  views.remember_session(id)
  local kind = update.sessionUpdate
  if kind == 'turn_started' then
    turn_text[id] = nil
  elseif kind == 'turn_ended' then
    local text = vim.trim(table.concat(turn_text[id] and turn_text[id].parts or {}))
    turn_text[id] = nil
    if config.options.notify_agent_messages and text ~= '' then
      notify.info(text)
    end
    if type(update.error) == 'table' and (prompting[id] or 0) == 0 then
      notify.error(('turn %s failed: %s'):format(update.turnId, update.error.message))
    end
  else
    collect(id, kind, update)
  end
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'AskbridgeSessionUpdate',
    modeline = false,
    data = params,
  })
end

return M
