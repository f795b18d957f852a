-- test_nvim_mcp.py: an MCP agent's timed question the user lets run out here
-- (the picker is left alone; the claimed countdown ends it: pending for the
-- agent), then answers late with :AskbridgeAnswer (mark "replied"); the agent
-- collects that answer with get_answers, which settles the question.
return function(H)
  H.setup()
  H.on_select(function() end)
  H.mark('ready')
  H.wait('the countdown to close the card', H.prompt_closed(), 30000)
  H.wait('the question to be continued', function()
    return #require('askbridge').pending() == 1
  end)
  H.on_select(H.pick('option', 'Postgres'))
  vim.cmd('AskbridgeAnswer')
  H.wait('the late reply to be accepted', H.answered())
  H.mark('replied')
  H.await_mark('done', 60000)
  H.wait('the question to settle', function()
    return #require('askbridge').pending() == 0
  end)
end
