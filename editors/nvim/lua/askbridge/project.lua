--- Which setup() calls come from a project's own files (behavior.md S20).
---
--- The options that start a program, give it environment, name a model
--- endpoint or choose the data directory whose host gets the server's
--- environment (`M.USER_ONLY`) are taken only from the user's own config. A
--- project can bring Lua that calls setup(): Neovim's 'exrc' files (.nvim.lua,
--- .nvimrc, .exrc, run once trusted through vim.secure) and lazy.nvim's
--- .lazy.lua. A setup() call is a project's when a Lua function on its call
--- stack was defined in a file of one of those names, or when Vim script of
--- such a file is being run (`:lua` in a .nvimrc has no file of its own, but
--- `expand('<stack>')` names the script). Modelines cannot run Lua. What a
--- project file does other than calling setup() is not in the plugin's hands:
--- a trusted exrc runs any code it holds.

local M = {}

--- Options only the user's own config may set.
M.USER_ONLY = { 'cmd', 'cmd_env', 'cmd_cwd', 'model', 'data_dir' }

--- File names Neovim ('exrc') or lazy.nvim (its local spec) read from a project.
M.PROJECT_FILES =
  { ['.nvim.lua'] = true, ['.nvimrc'] = true, ['.exrc'] = true, ['.lazy.lua'] = true }

local function basename(path)
  return path:match('([^/]+)$') or path
end

--- The project file among the callers, as its stack names it, or nil.
--- @return string?
function M.calling_file()
  local level = 2
  while true do
    local info = debug.getinfo(level, 'S')
    if not info then
      break
    end
    -- "@/p/.nvim.lua" for a file; a chunk loaded from a string carries the name it was given.
    local source = (info.source or ''):gsub('^@', '')
    if M.PROJECT_FILES[basename(source)] then
      return source
    end
    level = level + 1
  end
  -- Vim script frames, e.g. "script /p/.nvimrc[1]..function F[2]" (a project's
  -- .nvimrc may also be named relatively: ".nvimrc[1]").
  for _, entry in ipairs(vim.split(vim.fn.expand('<stack>'), '..', { plain = true })) do
    local path = vim.trim(entry):gsub('%[%d+%]$', ''):gsub('^script ', '')
    if M.PROJECT_FILES[basename(path)] then
      return path
    end
  end
  return nil
end

--- `opts` without the user-only options when a project file calls; the names dropped.
--- @param opts table
--- @return table, string[], string?
function M.filter(opts)
  local file = M.calling_file()
  if not file then
    return opts, {}, nil
  end
  local kept, dropped = vim.deepcopy(opts), {}
  for _, name in ipairs(M.USER_ONLY) do
    if kept[name] ~= nil then
      kept[name] = nil
      table.insert(dropped, name)
    end
  end
  return kept, dropped, file
end

return M
