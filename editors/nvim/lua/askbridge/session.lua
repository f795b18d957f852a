--- Driving an agent session from Neovim: `session/new`, `session/prompt`,
--- `session/cancel`, and the `session/update` notifications (protocol.md
--- "Sessions").
---
--- `M.current` is the session :AskbridgePrompt talks to (the last one created).
--- Agent text is collected per turn and shown with vim.notify when the turn
--- ends (option notify_agent_messages). Every update also fires
--- `User AskbridgeSessionUpdate` (data = the notification's params).

local client_mod = require('askbridge.client')
local config = require('askbridge.config')
local views = require('askbridge.views')

local M = {}

--- @type string?
M.current = nil

--- Agent text of the running turn, by session id.
local turn_text = {}

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

--- Sends a prompt to `session_id` (default: the current session, created first
--- when there is none); `callback(err, stop_reason, session_id)` when its turn ends.
function M.prompt(text, callback, session_id)
  local function send(id)
    client_mod.call('session/prompt', {
      sessionId = id,
      prompt = { { type = 'text', text = text } },
    }, function(err, result)
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

--- vim.lsp handler for `session/update`.
function M.on_update(_, params)
  if type(params) ~= 'table' or type(params.update) ~= 'table' then
    return
  end
  local id, update = params.sessionId, params.update
  views.remember_session(id)
  local kind = update.sessionUpdate
  if kind == 'turn_started' then
    turn_text[id] = {}
  elseif kind == 'agent_message_chunk' and update.content and update.content.text then
    turn_text[id] = turn_text[id] or {}
    table.insert(turn_text[id], update.content.text)
  elseif kind == 'turn_ended' then
    local text = table.concat(turn_text[id] or {})
    turn_text[id] = nil
    if config.options.notify_agent_messages and text ~= '' then
      vim.notify('askbridge: ' .. text, vim.log.levels.INFO)
    end
  end
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'AskbridgeSessionUpdate',
    modeline = false,
    data = params,
  })
end

return M
