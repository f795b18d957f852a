-- transcripts/late-reply-refused.json (hand-written) against the plugin: a
-- continued question (a subscriber's first didChange) answered late twice;
-- the server refuses with REPLY_QUEUED, then false. The user must be told
-- each time, with no error.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local T = dofile(here .. '/transcript_driver.lua')

return function(H)
  T.start(H)
  local views = require('askbridge.views')
  local replies = require('askbridge.replies')
  T.wait(H, 'the continued question', function()
    return #views.continued() == 1
  end)
  for attempt = 1, 2 do
    H.on_select(H.pick('option', 'Postgres'))
    replies.answer_entry(views.continued()[1])
    T.wait(H, 'the late reply to be answered', function()
      return #H.events('AskbridgeAnswered') == attempt
    end)
  end
  H.result.answered = vim.tbl_map(function(ev)
    return ev.data
  end, H.events('AskbridgeAnswered'))
end
