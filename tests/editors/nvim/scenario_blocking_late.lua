-- The builtin, blocking vim.ui.select (inputlist) on a timed batch of two
-- questions (server timeout 2 s): the user lets the countdown reach zero on
-- the first question, then answers both. The card must have replied
-- ASK_TIMED_OUT at zero (pending), and the answers go as a late reply.
return function(H)
  H.setup()
  H.new_session()
  H.use_builtin_select()
  local function closed()
    return #H.events('AskbridgePromptClosed') > 0
  end
  H.type_when(closed, '2<CR>') -- Postgres, typed after the countdown ended
  H.type_when(function()
    return #H.result.prompts >= 2
  end, '1<CR>') -- the second question, asked late
  local turn = H.prompt('pick a database')
  H.wait('the late reply to be answered', H.answered(), 20000)
  H.result.stop_reason = turn.stop_reason
  H.wait('the inbox turn to end', H.inbox_turn_ended())
  H.result.pending_after = #require('askbridge').pending()
end
