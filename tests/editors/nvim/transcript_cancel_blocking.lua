-- protocol/transcripts/session-cancel-during-ask.json with the builtin,
-- blocking picker: the turn is cancelled (from a timer: typing goes to the
-- picker) while the list waits; the server's $/cancelRequest cannot close it.
-- The transport replies -32800 at once; the user then picks an option, and
-- the plugin must send nothing more (a blocking ask has no call to answer
-- late) but tell the user their answer was not sent.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local T = dofile(here .. '/transcript_driver.lua')

return function(H)
  T.start(H)
  H.use_builtin_select()
  H.when(function()
    return #H.result.prompts >= 1
  end, function()
    vim.cmd('AskbridgeCancel')
  end)
  H.type_when(H.prompt_closed(), '1<CR>')
  local turn = H.prompt('Set up the project')
  T.wait(H, 'the turn to end', function()
    return turn.done
  end)
  H.result.stop_reason = turn.stop_reason
  T.wait(H, 'the choice to be typed', function()
    return H.result.typed ~= nil
  end)
  vim.wait(200) -- lets a wrongly sent message reach the player before shutdown
end
