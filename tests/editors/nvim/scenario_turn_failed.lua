-- A turn whose model fails is told once, never also as agent text "Error: …". First
-- :AskbridgePrompt's own prompt: its error reply says it. Then a prompt this window did
-- not send (sent past the plugin, as another window's would be): the turn_ended update's
-- error says it. Each once.
return function(H)
  H.setup({ notify_agent_messages = true })
  local session_id = H.new_session()
  vim.cmd('AskbridgePrompt go')
  H.wait('the first turn to end', function()
    return #H.result.notes >= 1
  end)
  vim.wait(300) -- anything said twice would come now
  H.result.after_own_prompt = #H.result.notes
  local answered = false
  require('askbridge.client').call('session/prompt', {
    sessionId = session_id,
    prompt = { { type = 'text', text = 'again' } },
  }, function()
    answered = true
  end)
  H.wait('the other prompt to be answered', function()
    return answered
  end)
  vim.wait(300)
end
