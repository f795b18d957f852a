--- Every message the plugin shows goes through here, so each says "askbridge:"
--- exactly once (messages built elsewhere — a start error, a server error —
--- may already carry the prefix) and an error already shown is not shown again
--- by the command that ran into it.
---
--- While a picker call is on the stack (`M.hold()` … `M.release()`, around
--- every vim.ui.select / vim.ui.input a card makes) messages are held back and
--- shown once it returns: with the builtin, blocking picker they would be
--- written over its list, and an error message emitted while Neovim waits
--- inside `inputlist()` is turned into an exception that aborts the picker and
--- loses the user's choice.

local M = {}

local PREFIX = 'askbridge: '

--- @param msg string
--- @return string
function M.text(msg)
  msg = tostring(msg)
  if msg:sub(1, #PREFIX) == PREFIX then
    return msg
  end
  return PREFIX .. msg
end

--- "1 continued question", "2 continued questions"
--- @param count integer
--- @param noun string
--- @return string
function M.plural(count, noun)
  return ('%d %s%s'):format(count, noun, count == 1 and '' or 's')
end

local holds = 0
local held = {}

local function show(msg, level)
  if holds > 0 then
    table.insert(held, { M.text(msg), level })
    return
  end
  vim.notify(M.text(msg), level)
end

--- Holds messages back until the matching `M.release()`.
function M.hold()
  holds = holds + 1
end

function M.release()
  holds = math.max(0, holds - 1)
  if holds > 0 or #held == 0 then
    return
  end
  local messages = held
  held = {}
  for _, message in ipairs(messages) do
    vim.notify(message[1], message[2])
  end
end

function M.info(msg)
  show(msg, vim.log.levels.INFO)
end

function M.warn(msg)
  show(msg, vim.log.levels.WARN)
end

function M.error(msg)
  show(msg, vim.log.levels.ERROR)
end

--- An error object for callbacks whose message the user has already seen.
--- @param message string
--- @return {code: integer, message: string, reported: true}
function M.reported_error(message)
  return { code = -32603, message = message, reported = true }
end

--- Shows a JSON-RPC error (or a string) unless it was already shown.
--- @param err table|string
function M.report(err)
  if type(err) == 'table' and err.reported then
    return
  end
  M.error(type(err) == 'table' and (err.message or vim.inspect(err)) or err)
end

return M
