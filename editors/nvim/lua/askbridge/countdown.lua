--- The local countdown of a timed card: methods of askbridge.Card (card.lua).
---
--- `card:start_countdown(ms)` (from the server's claim frame, claims.lua),
--- `card:more_time()`, `card:seconds_left()`, `card:stop_countdown()`. Every
--- whole second fires `User AskbridgeCountdown` (data = {card_id, call_id,
--- remaining_ms}); at zero the card is closed with "timed_out".

local config = require('askbridge.config')

local uv = vim.uv or vim.loop

local Card = {}

local function fire(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, modeline = false, data = data })
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
        self:tick_countdown()
      end)
    )
  end
end

--- @private
function Card:tick_countdown()
  if self.closed or not self.deadline then
    return
  end
  uv.update_time()
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
  self:tick_countdown()
  return true
end

return Card
