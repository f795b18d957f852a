-- Folds the change sequences of $ASKBRIDGE_FOLD_INPUT with the plugin's
-- views.apply_changes and writes the resulting views to $ASKBRIDGE_FOLD_OUTPUT
-- (tests/editors/test_nvim_views.py compares them with the reference fold).
-- Also records whether a fold ever modified the view it was given.
vim.opt.runtimepath:prepend(assert(os.getenv('ASKBRIDGE_TEST_PLUGIN')))
local views = require('askbridge.views')
local input = assert(io.open(assert(os.getenv('ASKBRIDGE_FOLD_INPUT'))))
local cases = vim.json.decode(input:read('*a'), { luanil = { object = true } })
input:close()
local out = { views = {}, mutated = 0 }
for _, case in ipairs(cases) do
  local view = nil
  for _, changes in ipairs(case) do
    local before = vim.deepcopy(view)
    local given = view
    view = views.apply_changes(view, changes)
    if given ~= nil and not vim.deep_equal(before, given) then
      out.mutated = out.mutated + 1
    end
  end
  table.insert(out.views, view or { active = {}, settled = {} })
end
local output = assert(io.open(assert(os.getenv('ASKBRIDGE_FOLD_OUTPUT')), 'w'))
output:write(vim.json.encode(out))
output:close()
vim.cmd('qa!')
