-- Shared by the transcript_*.lua scenarios (tests/editors/test_nvim_transcripts.py):
-- the server is tests/editors/transcript_player.py, which exits at the first
-- message that does not fit the transcript. Waiting on anything else after
-- that would only time out, so these waits fail as soon as the player is gone.
local T = {}

--- H.wait that gives up at once when the player (the "server") has exited.
function T.wait(H, what, cond)
  local client_mod = require('askbridge.client')
  H.wait(what, function()
    if client_mod.exit_code ~= nil then
      error('the transcript player exited (mismatch: see its report) while waiting for ' .. what)
    end
    return cond()
  end)
end

--- Starts the plugin against the player and opens the transcript's session.
function T.start(H)
  H.setup()
  H.new_session()
end

--- Sends the transcript's prompt; waits for its turn to end and records the stop reason.
function T.prompt_turn(H, text)
  local turn = H.prompt(text)
  T.wait(H, 'the turn to end', function()
    return turn.done
  end)
  H.result.stop_reason = turn.stop_reason
  return turn
end

return T
