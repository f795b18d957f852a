--- LSP base-protocol framing: `Content-Length: N\r\n\r\n` + N bytes of JSON.
---
--- `M.encode(payload)` frames one message. `M.decoder()` returns a function
--- that takes stdout chunks as they come and returns the complete bodies
--- they finish (possibly none, possibly several). A header block without a
--- Content-Length is skipped, as the server does. Pure string work, safe in
--- luv's fast callbacks.

local M = {}

--- @param payload table
--- @return string
function M.encode(payload)
  local body = vim.json.encode(payload)
  return ('Content-Length: %d\r\n\r\n%s'):format(#body, body)
end

--- @return fun(chunk: string): string[]
function M.decoder()
  local buffer = ''
  return function(chunk)
    buffer = buffer .. chunk
    local bodies = {}
    while true do
      local header_end = buffer:find('\r\n\r\n', 1, true)
      if not header_end then
        break
      end
      local header = buffer:sub(1, header_end - 1):lower()
      local length = tonumber(header:match('content%-length:%s*(%d+)'))
      local body_start = header_end + 4
      if not length then
        buffer = buffer:sub(body_start)
      elseif #buffer < body_start + length - 1 then
        break
      else
        table.insert(bodies, buffer:sub(body_start, body_start + length - 1))
        buffer = buffer:sub(body_start + length)
      end
    end
    return bodies
  end
end

return M
