-- Entry point of every Neovim scenario: loads harness.lua, runs the scenario
-- named by $ASKBRIDGE_TEST_SCENARIO, writes the result JSON and quits.
-- A scenario is a Lua file returning `function(H) ... end`; it fills H.result.
vim.opt.runtimepath:prepend(assert(os.getenv('ASKBRIDGE_TEST_PLUGIN'), 'ASKBRIDGE_TEST_PLUGIN'))
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local H = dofile(here .. '/harness.lua')
local scenario = dofile(assert(os.getenv('ASKBRIDGE_TEST_SCENARIO'), 'ASKBRIDGE_TEST_SCENARIO'))
local ok, err = xpcall(scenario, debug.traceback, H)
if not ok then
  H.result.error = tostring(err)
end
H.finish()
