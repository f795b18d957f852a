-- Test harness for the askbridge Neovim plugin, run inside a real headless
-- Neovim against a real `askbridge serve` (tests/editors/test_nvim*.py).
--
-- Environment (set by the Python side):
--   ASKBRIDGE_TEST_CMD     JSON list: the server command (with --model, --ask-mode …)
--   ASKBRIDGE_TEST_DATA    the server's data directory
--   ASKBRIDGE_TEST_RESULT  where H.finish() writes H.result as JSON
--   ASKBRIDGE_TEST_SETUP   JSON object merged into the setup{} options
--   ASKBRIDGE_TEST_MARKS   (optional) file H.mark() appends to and
--                          H.await_mark() reads (shared by several Neovims)
--   ASKBRIDGE_TEST_REAL_NOTIFY  (optional) also show vim.notify messages
--
-- The user is simulated by replacing vim.ui.select / vim.ui.input with
-- scripted steps (H.on_select / H.on_input queue functions
-- `fn(items_or_opts, opts, on_choice)`), or by typing keys into Neovim's own
-- blocking picker (H.use_builtin_select, H.type_when); every call is recorded
-- in H.result.prompts. User events of the plugin are recorded in H.result.events.
local H = { result = { prompts = {}, events = {}, notes = {} } }

local selects, inputs = {}, {}

function H.now_ms()
  return vim.uv.hrtime() / 1e6
end

local function record_prompt(kind, prompt, items, opts)
  local entry = { ui = kind, prompt = prompt, at_ms = H.now_ms(), kind = opts.kind }
  if items then
    entry.items = {}
    entry.item_kinds = {}
    for _, item in ipairs(items) do
      table.insert(entry.items, opts.format_item and opts.format_item(item) or tostring(item))
      table.insert(entry.item_kinds, type(item) == 'table' and item.kind or 'value')
    end
  end
  if opts.askbridge then
    entry.call_id = opts.askbridge.call_id
    entry.session_id = opts.askbridge.session_id
    entry.seconds_left = opts.askbridge.seconds_left
  end
  table.insert(H.result.prompts, entry)
  return entry
end

local builtin_select = vim.ui.select

vim.ui.select = function(items, opts, on_choice)
  record_prompt('select', opts.prompt, items, opts)
  local step = table.remove(selects, 1)
  if not step then
    error('unexpected vim.ui.select: ' .. tostring(opts.prompt))
  end
  step(items, opts, on_choice)
end

vim.ui.input = function(opts, on_confirm)
  record_prompt('input', opts.prompt, nil, opts)
  local step = table.remove(inputs, 1)
  if not step then
    error('unexpected vim.ui.input: ' .. tostring(opts.prompt))
  end
  step(opts, on_confirm)
end

local real_notify = vim.notify
vim.notify = function(msg, level)
  table.insert(H.result.notes, { msg = msg, level = level })
  if os.getenv('ASKBRIDGE_TEST_REAL_NOTIFY') then
    real_notify(msg, level) -- in a terminal (test_nvim_tmux.py): shown as a user sees it
  end
end

--- Appends the line `name` (or `name value`) to $ASKBRIDGE_TEST_MARKS, for a
--- test that drives Neovim from outside (test_nvim_tmux.py) or runs several
--- Neovims that wait for each other (H.await_mark).
function H.mark(name, value)
  local path = os.getenv('ASKBRIDGE_TEST_MARKS')
  if path then
    local file = assert(io.open(path, 'a'))
    file:write(value and (name .. ' ' .. value) or name, '\n')
    file:close()
  end
end

--- The value of mark `name` in $ASKBRIDGE_TEST_MARKS (true for a mark without
--- one), or nil while nobody made it.
function H.marked(name)
  local path = assert(os.getenv('ASKBRIDGE_TEST_MARKS'), 'ASKBRIDGE_TEST_MARKS')
  local file = io.open(path, 'r')
  if not file then
    return nil
  end
  local found
  for line in file:lines() do
    local key, value = line:match('^(%S+) ?(.*)$')
    if key == name then
      found = value ~= '' and value or true
    end
  end
  file:close()
  return found
end

--- Waits (Neovim keeps serving) until another process made mark `name`; its value.
function H.await_mark(name, ms)
  H.wait('the mark ' .. name, function()
    return H.marked(name) ~= nil
  end, ms or 20000)
  return H.marked(name)
end

--- Puts Neovim's own vim.ui.select back (the blocking inputlist), still
--- recording every call; the test answers it with typed keys (H.type_when).
function H.use_builtin_select()
  vim.ui.select = function(items, opts, on_choice)
    local entry = record_prompt('select', opts.prompt, items, opts)
    builtin_select(items, opts, on_choice)
    entry.returned_at_ms = H.now_ms() -- when the user's keys ended the list
  end
end

--- Runs `fn()` once `cond()` holds, polling every 20 ms from a timer — which
--- keeps running while the builtin picker waits for keys.
function H.when(cond, fn)
  local function poll()
    if cond() then
      fn()
    else
      vim.defer_fn(poll, 20)
    end
  end
  vim.defer_fn(poll, 20)
end

--- Types `keys` (nvim_input) once `cond()` holds: the builtin picker reads them.
function H.type_when(cond, keys)
  H.when(cond, function()
    H.result.typed = H.result.typed or {}
    table.insert(H.result.typed, { keys = keys, at_ms = H.now_ms() })
    vim.api.nvim_input(keys)
  end)
end

--- Whether the plugin's card prompt was closed (AskbridgePromptClosed) `n` times.
function H.prompt_closed(n)
  return function()
    return #H.events('AskbridgePromptClosed') >= (n or 1)
  end
end

--- Whether `n` (default 1) late replies were answered (AskbridgeAnswered).
function H.answered(n)
  return function()
    return #H.events('AskbridgeAnswered') >= (n or 1)
  end
end

function H.on_select(fn)
  table.insert(selects, fn)
end

function H.on_input(fn)
  table.insert(inputs, fn)
end

--- A select step choosing the first item with this kind (and label, if given).
function H.pick(kind, label)
  return function(items, _, on_choice)
    for _, item in ipairs(items) do
      if item.kind == kind and (label == nil or item.label == label) then
        on_choice(item)
        return
      end
    end
    error(('no %s item %s'):format(kind, tostring(label)))
  end
end

--- A select step that opens a floating window (as an asynchronous picker does)
--- and never chooses: `picker` gets {win, items, on_choice}, and `closed_at`
--- once the window is closed.
function H.float_picker(picker)
  return function(items, _, on_choice)
    local buf = vim.api.nvim_create_buf(false, true)
    picker.win = vim.api.nvim_open_win(buf, true, {
      relative = 'editor',
      row = 1,
      col = 1,
      width = 30,
      height = #items,
      style = 'minimal',
    })
    picker.items, picker.on_choice = items, on_choice
    vim.api.nvim_create_autocmd('WinClosed', {
      pattern = tostring(picker.win),
      once = true,
      callback = function()
        picker.closed_at = H.now_ms()
      end,
    })
  end
end

--- A select step for the :AskbridgeSessions list choosing `session_id`.
function H.pick_session(session_id)
  return function(items, _, on_choice)
    for _, item in ipairs(items) do
      if item.session_id == session_id then
        on_choice(item)
        return
      end
    end
    error('the session is not listed: ' .. session_id)
  end
end

--- An input step typing `text`.
function H.type(text)
  return function(_, on_confirm)
    on_confirm(text)
  end
end

--- Waits until `cond()` is truthy, failing with `what` after `ms`.
function H.wait(what, cond, ms)
  local ok = vim.wait(ms or 10000, cond, 10)
  if not ok then
    error('timed out waiting for ' .. what, 2)
  end
end

for _, pattern in ipairs({
  'AskbridgePromptClosed',
  'AskbridgeDidChange',
  'AskbridgeAnswered',
  'AskbridgeSessionUpdate',
}) do
  vim.api.nvim_create_autocmd('User', {
    pattern = pattern,
    callback = function(ev)
      table.insert(H.result.events, { name = pattern, data = ev.data, at_ms = H.now_ms() })
    end,
  })
end

--- A condition: a turn other than the first one (t-1) ended — the turn a late reply woke.
function H.inbox_turn_ended()
  return function()
    for _, ev in ipairs(H.events('AskbridgeSessionUpdate')) do
      local update = ev.data.update
      if update.sessionUpdate == 'turn_ended' and update.turnId ~= 't-1' then
        return true
      end
    end
    return false
  end
end

--- Events recorded so far with this name.
function H.events(name)
  return vim.tbl_filter(function(ev)
    return ev.name == name
  end, H.result.events)
end

--- Loads the plugin (plugin/ is not sourced under -u NONE) and calls setup{}.
function H.start_plugin(extra)
  vim.cmd('runtime plugin/askbridge.lua')
  local opts = {
    cmd = vim.json.decode(assert(os.getenv('ASKBRIDGE_TEST_CMD'))),
    data_dir = assert(os.getenv('ASKBRIDGE_TEST_DATA')),
    notify_agent_messages = false,
    -- Generous: the card waits for the claim frame so it can show the seconds left.
    claim_wait_ms = 5000,
  }
  local from_test = vim.json.decode(os.getenv('ASKBRIDGE_TEST_SETUP') or '{}')
  opts = vim.tbl_extend('force', opts, from_test, extra or {})
  require('askbridge').setup(opts)
end

--- H.start_plugin, then waits for `initialize` and records the server's answer.
function H.setup(extra)
  H.start_plugin(extra)
  local client_mod = require('askbridge.client')
  H.wait('the server to initialize', function()
    local client = client_mod.get()
    return client and client.initialized
  end)
  local client = client_mod.get()
  H.result.server_capabilities = client.server_capabilities
  H.result.server_info = client.server_info
  return client
end

--- Creates a session and returns its id.
function H.new_session()
  local session_id, failure
  require('askbridge').new_session(nil, function(err, id)
    session_id, failure = id, err
  end)
  H.wait('session/new', function()
    return session_id or failure
  end)
  assert(not failure, vim.inspect(failure))
  H.result.session_id = session_id
  return session_id
end

--- Loads `session_id` through :AskbridgeSessions (the user picks it in the list);
--- returns once the plugin said it loaded.
function H.load_through_sessions(session_id)
  H.on_select(H.pick_session(session_id))
  local before = #H.result.notes
  vim.cmd('AskbridgeSessions')
  H.wait('the session to load', function()
    for i = before + 1, #H.result.notes do
      if H.result.notes[i].msg:find('loaded session', 1, true) then
        return true
      end
    end
    return false
  end)
end

--- Whether the session's view in the plugin holds `call_id` in `state`.
function H.in_state(session_id, call_id, state)
  return function()
    return require('askbridge.views').state_of(session_id, call_id) == state
  end
end

--- Sends a prompt; returns a table whose `stop_reason` is set when the turn ends.
function H.prompt(text)
  local turn = {}
  require('askbridge').prompt(text, function(err, stop_reason)
    turn.err, turn.stop_reason, turn.done = err, stop_reason, true
  end)
  return turn
end

--- Stops the server (shutdown + exit), writes the result and quits Neovim.
function H.finish()
  local client_mod = require('askbridge.client')
  if client_mod.get() then
    client_mod.stop()
  end
  vim.wait(10000, function()
    return client_mod.exit_code ~= nil
  end, 20)
  H.result.server_exit_code = client_mod.exit_code
  H.result.pending_selects = #selects
  H.result.pending_inputs = #inputs
  local path = assert(os.getenv('ASKBRIDGE_TEST_RESULT'))
  -- Written beside and renamed into place: a test that waits for the file to exist
  -- (test_nvim_tmux.py) must never read it half written.
  local file = assert(io.open(path .. '.tmp', 'w'))
  file:write(vim.json.encode(H.result))
  file:close()
  assert(os.rename(path .. '.tmp', path))
  vim.cmd('qa!')
end

return H
