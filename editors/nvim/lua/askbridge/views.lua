--- The plugin's copy of each session's question view (behavior.md V7, S2).
---
--- The server sends `userQuestions/didChange {sessionId, changes}`: only what
--- changed. We fold the changes into our copy with the rules of
--- protocol/README.md ("userQuestions/didChange"), the same fold as the
--- reference `askbridge.protocol.views.apply_view_changes`:
---   open       append the call to `active` with its questions (a re-ask moves it to the end);
---   continued  change the state in place — or, carrying questions, append the
---              entry we do not have (a new subscriber's first didChange);
---   settled    move the call from `active` to the end of `settled` with its answers;
---   removed    drop it from `active`.
--- A session's first didChange after we subscribe (session/new, session/load,
--- or a lazy load by a session-scoped method) carries every active entry, so a
--- copy that may be stale is dropped first (`M.forget`: before session/load,
--- and for every session when the server exits). `userQuestions/list`
--- (`M.refresh`) returns the whole view and replaces the copy.
---
--- A question in state "continued" returned pending to the model but is still
--- answerable (:AskbridgePending, :AskbridgeAnswer; replies.lua).
---
--- Fires `User AskbridgeDidChange` (data = {session_id, view, changes}) after
--- every fold.

local client_mod = require('askbridge.client')
local notify = require('askbridge.notify')

local M = {}

--- @type table<string, {active: table[], settled: table[]}> our copy, by session id
M.views = {}

--- Calls that left a session's view ("removed": a failed or aborted tool call), by
--- session id, so that `M.state_of` can tell them from calls we never knew.
--- @type table<string, table<string, boolean>>
local removed = {}

--- Sessions this Neovim has seen, so :AskbridgePending can refresh them.
--- @type table<string, boolean>
M.sessions = {}

--- Functions waiting for a view to change: called after every fold.
--- @type fun(session_id: string)[]
local watchers = {}

local function fire(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, modeline = false, data = data })
end

function M.remember_session(session_id)
  if session_id then
    M.sessions[session_id] = true
  end
end

--- `view` after `changes`, as a new table (`view` itself is not modified).
--- @param view {active: table[], settled: table[]}?
--- @param changes table[]
function M.apply_changes(view, changes)
  view = view or { active = {}, settled = {} }
  local active, settled = {}, vim.list_extend({}, view.settled or {})
  for _, entry in ipairs(view.active or {}) do
    table.insert(active, vim.deepcopy(entry))
  end
  for _, change in ipairs(changes) do
    local call_id, state = change.callId, change.state
    local index
    for i, entry in ipairs(active) do
      if entry.callId == call_id then
        index = i
        break
      end
    end
    if state == 'open' or (state == 'continued' and not index and change.questions) then
      if index then
        table.remove(active, index)
      end
      table.insert(active, { callId = call_id, questions = change.questions or {}, state = state })
    elseif state == 'continued' then
      if index then
        active[index].state = 'continued'
      end
    elseif state == 'settled' then
      if index then
        table.remove(active, index)
      end
      table.insert(settled, { callId = call_id, answers = change.answers or {} })
    elseif state == 'removed' and index then
      table.remove(active, index)
    end
  end
  return { active = active, settled = settled }
end

local function store(session_id, view, changes)
  M.views[session_id] = view
  fire('AskbridgeDidChange', { session_id = session_id, view = view, changes = changes })
  -- The statusline's "N pending" is read from this copy, but Vim redraws a statusline
  -- only on its own events: a late reply settling a call would leave "1 pending" shown.
  pcall(vim.cmd, 'redrawstatus!')
  local current = watchers
  watchers = {}
  for _, watcher in ipairs(current) do
    if not watcher(session_id) then
      table.insert(watchers, watcher)
    end
  end
end

--- vim.lsp handler for the `userQuestions/didChange` notification.
function M.on_did_change(_, params)
  if type(params) ~= 'table' or type(params.sessionId) ~= 'string' then
    return
  end
  local changes = params.changes
  if type(changes) ~= 'table' then
    return
  end
  for _, change in ipairs(changes) do
    if type(change) ~= 'table' or type(change.callId) ~= 'string' then
      return -- not the protocol's shape: keep the copy we have rather than a wrong one
    end
  end
  M.remember_session(params.sessionId)
  local gone = removed[params.sessionId] or {}
  removed[params.sessionId] = gone
  for _, change in ipairs(changes) do
    gone[change.callId] = change.state == 'removed' or nil
  end
  store(params.sessionId, M.apply_changes(M.views[params.sessionId], changes), changes)
end

--- Drops our copy of a session's view (all of them without an id): the next
--- subscription's first didChange brings every active entry again.
--- @param session_id string?
function M.forget(session_id)
  if session_id then
    M.views[session_id] = nil
    removed[session_id] = nil
  else
    M.views = {}
    removed = {}
  end
end

--- The state of a call in our copy: "open", "continued", "settled", "removed"
--- (it left the view) or nil (unknown).
function M.state_of(session_id, call_id)
  local view = M.views[session_id]
  if not view then
    return nil
  end
  for _, entry in ipairs(view.active) do
    if entry.callId == call_id then
      return entry.state
    end
  end
  for _, entry in ipairs(view.settled) do
    if entry.callId == call_id then
      return 'settled'
    end
  end
  return (removed[session_id] or {})[call_id] and 'removed' or nil
end

--- Calls `fn(state)` once `cond(state)` holds for the call's state in our copy
--- (at once when it holds now), or with whatever the state is after `timeout_ms`.
--- @param cond fun(state: string?): boolean
--- @param fn fun(state: string?)
function M.when_state(session_id, call_id, cond, timeout_ms, fn)
  if cond(M.state_of(session_id, call_id)) then
    fn(M.state_of(session_id, call_id))
    return
  end
  local done = false
  local function finish()
    if not done then
      done = true
      fn(M.state_of(session_id, call_id))
    end
    return true
  end
  table.insert(watchers, function(changed)
    if done then
      return true
    end
    if changed == session_id and cond(M.state_of(session_id, call_id)) then
      return finish()
    end
    return false
  end)
  vim.defer_fn(finish, timeout_ms)
end

--- Calls `fn()` once the call is no longer "open" in our copy (its tool call
--- returned), or after `timeout_ms` — whichever comes first; at once when it
--- is not open now.
function M.when_not_open(session_id, call_id, timeout_ms, fn)
  M.when_state(session_id, call_id, function(state)
    return state ~= 'open'
  end, timeout_ms, function()
    fn()
  end)
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

--- Asks the server for the whole view of every known session
--- (`userQuestions/list`), then calls `done()`.
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
        store(session_id, { active = view.active or {}, settled = view.settled or {} }, nil)
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

--- :AskbridgePending — refreshes and lists the continued questions.
function M.show_pending()
  M.refresh(function()
    local entries = M.continued()
    if #entries == 0 then
      notify.info('no continued questions')
      return
    end
    local count = notify.plural(#entries, 'continued question')
    local lines = { count .. ' — :AskbridgeAnswer to reply' }
    for _, entry in ipairs(entries) do
      table.insert(lines, '  ' .. M.describe(entry))
    end
    notify.info(table.concat(lines, '\n'))
  end)
end

return M
