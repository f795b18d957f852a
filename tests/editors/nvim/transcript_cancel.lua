-- protocol/transcripts/session-cancel-during-ask.json against the plugin: the
-- card is an asynchronous picker that never answers by itself; the user runs
-- :AskbridgeCancel, the server's $/cancelRequest must close the card (the
-- transport replies -32800), and the picker's late choice must send nothing.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local T = dofile(here .. '/transcript_driver.lua')

return function(H)
  T.start(H)
  local picker = {}
  H.on_select(function(items, _, on_choice)
    picker.items, picker.on_choice = items, on_choice
  end)
  local turn = H.prompt('Set up the project')
  T.wait(H, 'the picker to open', function()
    return picker.on_choice ~= nil
  end)
  vim.cmd('AskbridgeCancel')
  T.wait(H, 'the card to close', function()
    return #H.events('AskbridgePromptClosed') > 0
  end)
  T.wait(H, 'the turn to end', function()
    return turn.done
  end)
  H.result.stop_reason = turn.stop_reason
  picker.on_choice(picker.items[1]) -- too late: must be dropped
  vim.wait(100) -- lets a wrongly sent reply reach the player before shutdown
end
