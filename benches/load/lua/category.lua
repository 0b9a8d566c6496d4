-- Single-object category writes (scenarios 3, 5, b-write). Every answer must be 201; anything
-- else is counted and reported as BENCH non201=N (and errors by status class).
-- args: DATAFILE MODE DELAY_MS
--   DATAFILE line 1: TOKEN; line 2 (MODE=update): comma-separated category ids to update
--   MODE: create -> POST /category {"categories":{"c":{"title":...}}}
--         update -> PUT /category  {"categories":{"c":{"id":ID,"title":...}}} (state size stays constant)
--   DELAY_MS: wrk delay() before each request (0 = none), used to throttle the writers of the mix.
local C = dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
setup = C.setup

local pool = {}
local delay_ms = 0
non201, created, s4xx, s5xx = 0, 0, 0, 0

function init(args)
   math.randomseed(os.time() * 1000 + (thread_id or 0) * 7919)
   local lines = C.read_lines(args[1])
   local mode = args[2] or "create"
   delay_ms = tonumber(args[3]) or 0
   local h = C.api_headers(lines[1])
   h["Content-Type"] = "application/json"
   local ids = lines[2] and C.split(lines[2], ",") or {}
   for i = 1, 500 do
      local title = string.format("Bench %d-%d", thread_id or 0, i)
      if mode == "update" then
         local id = ids[math.random(#ids)]
         pool[i] = wrk.format("PUT", "/category", h,
            string.format('{"categories":{"c":{"id":%s,"title":"%s"}}}', id, title))
      else
         pool[i] = wrk.format("POST", "/category", h,
            string.format('{"categories":{"c":{"title":"%s"}}}', title))
      end
   end
end

if os.getenv("BENCH_DELAY") == "1" then
   function delay()
      return delay_ms
   end
end

function request()
   return pool[math.random(#pool)]
end

function response(status, headers, body)
   if status == 201 then
      created = created + 1
   else
      non201 = non201 + 1
      if status >= 500 then s5xx = s5xx + 1 elseif status >= 400 then s4xx = s4xx + 1 end
   end
end

function done(summary, latency, requests)
   C.report({ "created", "non201", "s4xx", "s5xx" })
end
