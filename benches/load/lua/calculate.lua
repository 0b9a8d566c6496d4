-- POST /basket/calculate of one 20-line basket (scenario g): the sale engine without writing.
-- Every answer must be 200; anything else is counted and reported as BENCH non200=N.
-- args: DATAFILE ; DATAFILE line 1: TOKEN; line 2: the JSON body
local C = dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
setup = C.setup

local req
non200 = 0

function init(args)
   local lines = C.read_lines(args[1])
   local h = C.api_headers(lines[1])
   h["Content-Type"] = "application/json"
   req = wrk.format("POST", "/basket/calculate", h, lines[2])
end

function request()
   return req
end

function response(status, headers, body)
   if status ~= 200 then
      non200 = non200 + 1
   end
end

function done(summary, latency, requests)
   C.report({ "non200" })
end
