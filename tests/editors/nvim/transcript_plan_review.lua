-- transcripts/plan-review.json (hand-written) against the plugin: the user
-- gives feedback on the first plan (free text, sent as custom) and approves
-- the second.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local T = dofile(here .. '/transcript_driver.lua')

return function(H)
  T.start(H)
  H.on_select(H.pick('other'))
  H.on_input(H.type('Use Postgres, not SQLite'))
  H.on_select(H.pick('option', 'Approve plan'))
  T.prompt_turn(H, 'Plan the migration')
end
