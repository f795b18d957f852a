-- test_nvim_mcp.py: Neovim starts while an MCP agent's question waits (it was
-- asked before, M3) and runs no session command at all: every external
-- session is followed (X1). The user answers that question with SQLite and the
-- next one the agent asks with Postgres; the test says when it is done.
return function(H)
  H.setup()
  H.on_select(H.pick('option', 'SQLite'))
  H.on_select(H.pick('option', 'Postgres'))
  H.mark('ready')
  H.await_mark('done', 60000)
  H.result.pending_after = #require('askbridge').pending()
end
