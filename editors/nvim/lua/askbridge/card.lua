--- A card: one batch of questions on screen, waiting for the user.
---
--- A card lives inside a coroutine (the transport's handler coroutine for
--- `userQuestions/ask`, or one started by :AskbridgeAnswer). `card:select()`
--- and `card:input()` open vim.ui.select / vim.ui.input and wait for the
--- user's choice. Two kinds of picker exist, and both are handled:
---   * asynchronous (telescope, fzf-lua, snacks, dressing …): the call returns
---     at once and the choice comes later; the coroutine yields meanwhile and
---     is resumed with the choice;
---   * blocking (the builtin vim.ui.select, an inputlist): the call returns only
---     after the choice. Neovim keeps running timers and server messages while
---     it waits, but the coroutine is then *inside* the call: it is not
---     suspended and must never be resumed (that was "cannot resume running
---     coroutine"). The choice made during the call is returned directly.
--- Only a suspended coroutine is ever resumed (`resume_suspended`).
---
--- `card:close(reason)` ends the card's request from outside:
---   * "server_cancelled"  the server sent $/cancelRequest (turn cancelled,
---                         deadline passed unclaimed, answered elsewhere, shutdown);
---   * "server_exited"     the connection to the server ended;
---   * "timed_out"         the local countdown of a timed question hit zero.
--- An asynchronous picker is closed (its new windows are closed, insert mode is
--- left) and the waiting coroutine gets `nil, reason`; a late choice from it is
--- ignored. A blocking picker cannot be closed: the card becomes *late*
--- (`card.late`) — the user's choice, and the rest of the batch, are still
--- asked and are sent as a late reply (replies.lua, L7) — unless the server is
--- gone. Either way `card.on_close(reason)` runs (ask.lua replies to the
--- request there, at once) and `User AskbridgePromptClosed` fires (data =
--- {card_id, call_id, session_id, reason}) so any vim.ui override can tear
--- itself down.
---
--- One card prompts at a time (screen.lua).
---
--- Timed cards also carry the countdown (countdown.lua).

local notify = require('askbridge.notify')
local screen = require('askbridge.screen')

local M = {}

--- @type table<integer, askbridge.Card> every card whose request is still open, by id
M.open_cards = {}

local next_card_id = 0

--- @class askbridge.Card
--- @field id integer
--- @field session_id string
--- @field call_id string?
--- @field questions table[]
--- @field timed boolean
--- @field closed string? why the card's request ended without our answer, once it did
--- @field late boolean true when it ended while a blocking picker was up: the answer goes late
--- @field deadline number? local deadline (uv.now() milliseconds) while counting down
--- @field waiting table? what is being waited on: {co, windows, is_prompt, in_open, done, value}
--- @field on_close fun(reason: string)? run once when the card is closed
local Card = {}
Card.__index = Card

local function fire(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, modeline = false, data = data })
end

--- Resumes `co` if, and only if, it is suspended (it yielded and waits for us).
local function resume_suspended(co, ...)
  if coroutine.status(co) ~= 'suspended' then
    return
  end
  local ok, err = coroutine.resume(co, ...)
  if not ok then
    notify.error(tostring(err))
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
    late = false,
    deadline = nil,
    waiting = nil,
  }, Card)
  M.open_cards[card.id] = card
  return card
end

--- Whether prompts may still be shown: open, or late (its answer goes as a late reply).
function Card:live()
  return not self.closed or self.late
end

--- Waits until `open(done)` calls `done(value)` or the card is closed.
--- Returns `value, nil` or `nil, reason`. `done` may be called during `open`
--- (a blocking picker): then nothing yields and nothing is resumed.
--- @param open fun(done: fun(value: any))
--- @param is_prompt boolean whether `open` shows something to the user
function Card:await(open, is_prompt)
  if not self:live() then
    return nil, self.closed
  end
  local co, is_main = coroutine.running()
  assert(co and not is_main, 'askbridge: a card must run inside a coroutine')
  local waiting = { co = co, windows = {}, is_prompt = is_prompt, in_open = true, done = false }
  self.waiting = waiting
  local before = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    before[win] = true
  end
  if is_prompt then
    notify.hold()
  end
  local ok, err = pcall(open, function(value)
    if waiting.done then
      return -- a picker answering twice
    end
    waiting.done, waiting.value = true, value
    if waiting.in_open or self.waiting ~= waiting then
      return -- answered during open (returned below), or the card was closed: ignored
    end
    self.waiting = nil
    vim.schedule(function()
      resume_suspended(co, value, nil)
    end)
  end)
  waiting.in_open = false
  if is_prompt then
    notify.release()
  end
  if not ok then
    self.waiting = nil
    error(err, 0)
  end
  if waiting.done then
    -- A blocking picker: the user chose while we were inside it. Even if the
    -- card was closed meanwhile the choice is real (card.late sends it late).
    self.waiting = nil
    if not self:live() then
      return nil, self.closed
    end
    return waiting.value, nil
  end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if not before[win] then
      table.insert(waiting.windows, win)
    end
  end
  if self.closed and self.waiting == waiting then
    -- Closed during `open`, yet the picker returned without a choice: it is
    -- asynchronous after all, so close it as any other.
    self.late = false
    self:close_prompt(waiting)
    self.waiting = nil
    screen.release(self)
    return nil, self.closed
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
    late = card.late,
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

--- @private
--- Closes the windows an asynchronous prompt opened.
function Card:close_prompt(waiting)
  for _, win in ipairs(waiting.windows) do
    if vim.api.nvim_win_is_valid(win) then
      if vim.api.nvim_get_current_win() == win and vim.fn.mode():find('^[iR]') then
        vim.cmd('stopinsert')
      end
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
end

--- Closes the card (see the module docstring). Idempotent.
--- @param reason string
function Card:close(reason)
  if self.closed then
    return
  end
  self.closed = reason
  self:stop_countdown()
  self.deadline = nil
  M.open_cards[self.id] = nil
  local waiting = self.waiting
  if waiting and waiting.in_open then
    -- A blocking picker is on screen: it cannot be closed from here, and the
    -- coroutine is inside it. What the user picks is still sent, late.
    self.late = waiting.is_prompt and reason ~= 'server_exited'
  elseif waiting then
    self.waiting = nil
    if waiting.is_prompt then
      self:close_prompt(waiting)
    end
    vim.schedule(function()
      resume_suspended(waiting.co, nil, reason)
    end)
  end
  if not self.late then
    screen.release(self)
  end
  if waiting and waiting.is_prompt then
    fire('AskbridgePromptClosed', {
      card_id = self.id,
      call_id = self.call_id,
      session_id = self.session_id,
      reason = reason,
    })
  end
  if self.on_close then
    local ok, err = pcall(self.on_close, reason)
    if not ok then
      notify.error('closing a card failed: ' .. tostring(err))
    end
  end
end

--- Marks a card finished (answered, dismissed, or sent late). Idempotent.
function Card:finish()
  self:stop_countdown()
  M.open_cards[self.id] = nil
  screen.release(self)
end

for name, method in pairs(require('askbridge.countdown')) do
  Card[name] = method
end

M.Card = Card

return M
