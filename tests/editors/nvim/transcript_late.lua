-- protocol/transcripts/pending-late-reply.json (its ask exchange left out by
-- the player: see test_nvim_transcripts.py) against the plugin: the question
-- turns continued (userQuestions/didChange), the user answers it late
-- (replies.answer_entry, what :AskbridgeAnswer runs once it knows the entry),
-- the agent's inbox turn runs, then the views are refreshed (userQuestions/list).
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local T = dofile(here .. '/transcript_driver.lua')

return function(H)
  T.start(H)
  T.prompt_turn(H, 'Set up the project')
  local views = require('askbridge.views')
  H.result.continued = views.continued()
  H.on_select(H.pick('option', 'SQLite (Recommended)'))
  require('askbridge.replies').answer_entry(assert(views.continued()[1], 'no continued question'))
  T.wait(H, 'the late reply to be accepted', function()
    return #H.events('AskbridgeAnswered') > 0
  end)
  H.result.answered = H.events('AskbridgeAnswered')[1].data
  T.wait(H, 'the inbox turn to end', function()
    for _, ev in ipairs(H.events('AskbridgeSessionUpdate')) do
      local update = ev.data.update
      if update.sessionUpdate == 'turn_ended' and update.turnId == 't-2' then
        return true
      end
    end
    return false
  end)
  local refreshed = false
  views.refresh(function()
    refreshed = true
  end)
  T.wait(H, 'userQuestions/list', function()
    return refreshed
  end)
  H.result.continued_after = views.continued()
end
