--- A card: one batch of questions on screen, waiting for the user.
---
--- A card lives inside a coroutine (the transport's handler coroutine for
--- `userQuestions/ask`, or one started by :AskbridgeAnswer). `card:select()`
--- and `card:input()` open vim.ui.select / vim.ui.input and yield until the
--- user chooses — or until the card is closed from outside, `card:close(reason)`:
---   * "server_cancelled"  the server sent $/cancelRequest (turn cancelled,
---                         deadline passed unclaimed, shutdown);
---   * "server_exited"     the connection to the server ended;
---   * "timed_out"         the local countdown of a timed question hit zero.
--- Closing resumes the waiting coroutine at once with the reason, closes the
--- windows the prompt opened (asynchronous pickers open floating windows and
--- return), leaves insert mode if the prompt was typing, and fires
--- `User AskbridgePromptClosed` (data = {call_id, session_id, reason}) so any
--- vim.ui override can tear itself down. A late choice from the closed
--- prompt is ignored.
---
--- Timed cards also carry the countdown: `card:start_countdown(ms)` (from the
--- server's claim frame), `card:more_time()`, `card:seconds_left()`. Every tick
--- fires `User AskbridgeCountdown` (data = {call_id, remaining_ms}).

local config = require('askbridge.config')

local uv = vim.uv or vim.loop

local M = {}

--- @type table<integer, askbridge.Card> every card currently on screen, by id
M.open_cards = {}

local next_card_id = 0

--- @class askbridge.Card
--- @field id integer
--- @field session_id string
--- @field call_id string?
--- @field questions table[]
--- @field timed boolean
--- @field closed string? why the card was closed, once it is
--- @field deadline number? local deadline (uv.now() milliseconds) while counting down
--- @field waiting table? the prompt being waited on: {seq, co, windows, is_prompt}
local Card = {}
Card.__index = Card

local function fire(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, modeline = false, data = data })
end

local function resume(co, ...)
  local ok, err = coroutine.resume(co, ...)
  if not ok then
    vim.notify('askbridge: ' .. tostring(err), vim.log.levels.ERROR)
  end
end

--- @param fields {session_id: string, call_id: string?, questions: table[], timed: boolean?}
--- @return askbridge.Card
function M.new(fields)
  next_card_id = next_card_id + 1
  local card = setmetatable({
    id = next_card_id,
    session_id = fields.session_id,
    call_id = fields.call_id,
    questions = fields.questions,
    timed = fields.timed == true,
    closed = nil,
    deadline = nil,
    waiting = nil,
    seq = 0,
  }, Card)
  M.open_cards[card.id] = card
  return card
end

--- Waits (yielding the running coroutine) until `open(done)` calls `done(value)`
--- or the card is closed. Returns `value, nil` or `nil, reason`.
--- @param open fun(done: fun(value: any))
--- @param is_prompt boolean whether `open` shows something to the user
function Card:await(open, is_prompt)
  if self.closed then
    return nil, self.closed
  end
  local co, is_main = coroutine.running()
  assert(co and not is_main, 'askbridge: a card must run inside a coroutine')
  self.seq = self.seq + 1
  local seq = self.seq
  local waiting = { seq = seq, co = co, windows = {}, is_prompt = is_prompt }
  self.waiting = waiting
  local before = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    before[win] = true
  end
  local ok, err = pcall(open, function(value)
    -- Scheduled, so that a UI answering synchronously (the builtin
    -- inputlist, a test override) resumes us only after we yielded.
    vim.schedule(function()
      if self.waiting == waiting then
        self.waiting = nil
        resume(co, value, nil)
      end
    end)
  end)
  if not ok then
    self.waiting = nil
    error(err, 0)
  end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if not before[win] then
      table.insert(waiting.windows, win)
    end
  end
  return coroutine.yield()
end

local function with_meta(card, opts, question)
  opts.askbridge = {
    card_id = card.id,
    session_id = card.session_id,
    call_id = card.call_id,
    question = question,
    seconds_left = card:seconds_left(),
  }
  return opts
end

--- vim.ui.select inside the card. Returns the chosen item (nil when dismissed),
--- or `nil, reason` when the card was closed meanwhile.
function Card:select(items, opts, question)
  opts = with_meta(self, opts, question)
  return self:await(function(done)
    vim.ui.select(items, opts, done)
  end, true)
end

--- vim.ui.input inside the card; same returns as select.
function Card:input(opts, question)
  opts = with_meta(self, opts, question)
  return self:await(function(done)
    vim.ui.input(opts, done)
  end, true)
end

--- Closes the card (see the module docstring). Idempotent.
--- @param reason string
function Card:close(reason)
  if self.closed then
    return
  end
  self.closed = reason
  self:stop_countdown()
  M.open_cards[self.id] = nil
  local waiting = self.waiting
  self.waiting = nil
  if not waiting then
    return
  end
  if waiting.is_prompt then
    for _, win in ipairs(waiting.windows) do
      if vim.api.nvim_win_is_valid(win) then
        if vim.api.nvim_get_current_win() == win and vim.fn.mode():find('^[iR]') then
          vim.cmd('stopinsert')
        end
        pcall(vim.api.nvim_win_close, win, true)
      end
    end
    fire('AskbridgePromptClosed', {
      card_id = self.id,
      call_id = self.call_id,
      session_id = self.session_id,
      reason = reason,
    })
  end
  vim.schedule(function()
    resume(waiting.co, nil, reason)
  end)
end

--- Marks a card finished normally (answered or dismissed by the user).
function Card:finish()
  self:stop_countdown()
  M.open_cards[self.id] = nil
end

--- @return integer? whole seconds left on the local countdown, nil when not counting
function Card:seconds_left()
  if not self.deadline then
    return nil
  end
  return math.max(0, math.ceil((self.deadline - uv.now()) / 1000))
end

--- Starts (or restarts) the local countdown: `remaining_ms` from now.
function Card:start_countdown(remaining_ms)
  if self.closed then
    return
  end
  uv.update_time()
  self.deadline = uv.now() + remaining_ms
  if not self.timer then
    self.timer = uv.new_timer()
    self.timer:start(
      0,
      250,
      vim.schedule_wrap(function()
        self:tick()
      end)
    )
  end
end

--- @private
function Card:tick()
  if self.closed or not self.deadline then
    return
  end
  local remaining = self.deadline - uv.now()
  local left = math.max(0, math.ceil(remaining / 1000))
  if left ~= self.last_left then
    self.last_left = left
    fire('AskbridgeCountdown', {
      card_id = self.id,
      call_id = self.call_id,
      remaining_ms = remaining,
    })
    pcall(vim.cmd, 'redrawstatus')
  end
  if remaining <= 0 then
    self:close('timed_out')
  end
end

function Card:stop_countdown()
  if self.timer then
    self.timer:stop()
    self.timer:close()
    self.timer = nil
  end
end

--- Adds `more_time_seconds` to the local countdown. The server keeps the wait
--- open for as long as our claim holds (behavior.md TW5), so only our own
--- countdown decides when the question turns pending.
function Card:more_time()
  if not self.deadline or self.closed then
    return false
  end
  uv.update_time()
  self.deadline = math.max(self.deadline, uv.now()) + config.options.more_time_seconds * 1000
  self.last_left = nil
  self:tick()
  return true
end

M.Card = Card

return M
