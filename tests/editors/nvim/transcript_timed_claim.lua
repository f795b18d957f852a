-- protocol/transcripts/timed-claim.json against the plugin: the timed card
-- claims its wait (attachWait), counts down from the player's one $/progress
-- frame (remainingMs 60000), and the user picks the recorded label.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local T = dofile(here .. '/transcript_driver.lua')

return function(H)
  T.start(H)
  H.on_select(H.pick('option', 'SQLite (Recommended)'))
  T.prompt_turn(H, 'Set up the project')
end
