-- The user's own init.lua ($XDG_CONFIG_HOME/nvim/init.lua) of the S20 test: the
-- plugin on the runtimepath, 'exrc' on (project files run once trusted), every
-- message recorded, and setup{} with the user's server command and data dir.
vim.opt.runtimepath:prepend(assert(os.getenv('ASKBRIDGE_TEST_PLUGIN')))
vim.o.exrc = true
_G.askbridge_notes = {}
vim.notify = function(msg, level)
  table.insert(_G.askbridge_notes, { msg = msg, level = level })
end
require('askbridge').setup({
  cmd = vim.json.decode(assert(os.getenv('ASKBRIDGE_TEST_CMD'))),
  data_dir = assert(os.getenv('ASKBRIDGE_TEST_DATA')),
  autostart = false,
})
