-- transcripts/approval.json (hand-written) against the plugin: two approval
-- cards; the user picks "Always allow" on the first and dismisses the second.
-- The player checks the replies; the prompts are recorded for the test.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local T = dofile(here .. '/transcript_driver.lua')

return function(H)
  T.start(H)
  H.on_select(H.pick('option', 'Always allow'))
  H.on_select(function(_, _, on_choice)
    on_choice(nil) -- <Esc>: ASK_CANCELLED (the server's approval_prompt denies)
  end)
  T.prompt_turn(H, 'Clean the build')
end
