-- Refresh grants (scenario d): POST /oauth/token grant_type=refresh_token, client auth in the form
-- body. Each answer carries the next refresh token of that family, so every thread keeps a queue of
-- the refresh tokens it may use: request() takes one, response() puts the successor back.
-- args: DATAFILE CLIENT_ID CLIENT_SECRET
--   DATAFILE lines: one refresh token each (one token family each); thread k of n takes the lines
--   i with i % n == k - 1, so no two threads share a family.
local C = dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
setup = C.setup

local queue, head, tail = {}, 1, 0
local client_id, client_secret
granted, failed, starved = 0, 0, 0

local function urlencode(s)
   return (string.gsub(s, "[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function init(args)
   client_id, client_secret = args[2], args[3]
   local n = tonumber(os.getenv("BENCH_THREADS") or "1")
   for i, token in ipairs(C.read_lines(args[1])) do
      if (i - 1) % n == (thread_id or 1) - 1 then
         tail = tail + 1
         queue[tail] = token
      end
   end
end

function request()
   local token = "mcd_rt_starved"
   if head <= tail then
      token = queue[head]
      queue[head] = nil
      head = head + 1
   else
      starved = starved + 1
   end
   local body = "grant_type=refresh_token&refresh_token=" .. urlencode(token)
      .. "&client_id=" .. urlencode(client_id) .. "&client_secret=" .. urlencode(client_secret)
   return wrk.format("POST", "/oauth/token",
      { ["Content-Type"] = "application/x-www-form-urlencoded" }, body)
end

function response(status, headers, body)
   local next_token = status == 200 and string.match(body, '"refresh_token"%s*:%s*"([^"]+)"')
   if next_token then
      granted = granted + 1
      tail = tail + 1
      queue[tail] = next_token
   else
      failed = failed + 1
   end
end

function done(summary, latency, requests)
   C.report({ "granted", "failed", "starved" })
end
