-- protocol/transcripts/blocking-ask.json against the plugin (the player in
-- tests/editors/transcript_player.py plays the server): the user picks the
-- label the transcript's answer holds; the player checks the reply.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local T = dofile(here .. '/transcript_driver.lua')

return function(H)
  T.start(H)
  H.on_select(H.pick('option', 'SQLite (Recommended)'))
  T.prompt_turn(H, 'Set up the project')
end
