-- The second Neovim of test_nvim_sessions.py, on the same data directory:
-- :AskbridgeSessions lists the stored sessions, the user picks the one named
-- by $ASKBRIDGE_TEST_SESSION, and its continued question is answered late
-- with :AskbridgeAnswer, which wakes the agent.
return function(H)
  H.setup()
  local wanted = assert(os.getenv('ASKBRIDGE_TEST_SESSION'))
  H.result.session_id = wanted
  H.result.pending_before = #require('askbridge').pending()
  H.load_through_sessions(wanted)
  H.result.current = require('askbridge').current_session()
  H.result.pending_loaded = require('askbridge').pending()
  H.result.status_loaded = require('askbridge').status()
  H.on_select(H.pick('option', 'Postgres'))
  vim.cmd('AskbridgeAnswer')
  H.wait('the late reply to be accepted', H.answered())
  H.wait('the inbox turn to end', function()
    for _, ev in ipairs(H.events('AskbridgeSessionUpdate')) do
      if ev.data.update.sessionUpdate == 'turn_ended' then
        return true
      end
    end
    return false
  end)
  H.wait('the question to settle', function()
    return #require('askbridge').pending() == 0
  end)
end
