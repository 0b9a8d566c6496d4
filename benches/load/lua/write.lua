-- Single-object writes (scenarios 3, 5, b-write). Every answer must be 201; anything else is
-- counted and reported as BENCH non201=N (and by status class).
-- args: DATAFILE MODE DELAY_MS
--   DATAFILE line 1: TOKEN; line 2 (update modes): comma-separated ids of the records to update
--   MODE: category-create -> POST /category {"categories":{"c":{"title":...}}}
--         category-update -> PUT /category  {"categories":{"c":{"id":ID,"title":...}}}
--         basket-note     -> PUT /basket    {"baskets":{"b":{"id":ID,"note":...}}} (open baskets)
--   Updates keep the merchant's state the same size however long the load runs.
--   DELAY_MS: with BENCH_DELAY=1, wrk's delay() before each request (throttles the mix's writers).
local C = dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
setup = C.setup

local pool = {}
local delay_ms = 0
non201, created, s4xx, s5xx = 0, 0, 0, 0

function init(args)
   math.randomseed(os.time() * 1000 + (thread_id or 0) * 7919)
   local lines = C.read_lines(args[1])
   local mode = args[2] or "category-create"
   delay_ms = tonumber(args[3]) or 0
   local h = C.api_headers(lines[1])
   h["Content-Type"] = "application/json"
   local ids = lines[2] and C.split(lines[2], ",") or {}
   for i = 1, 500 do
      local text = string.format("Bench %d-%d", thread_id or 0, i)
      if mode == "category-update" then
         pool[i] = wrk.format("PUT", "/category", h, string.format(
            '{"categories":{"c":{"id":%s,"title":"%s"}}}', ids[math.random(#ids)], text))
      elseif mode == "basket-note" then
         pool[i] = wrk.format("PUT", "/basket", h, string.format(
            '{"baskets":{"b":{"id":%s,"note":"%s"}}}', ids[math.random(#ids)], text))
      elseif mode == "category-create" then
         pool[i] = wrk.format("POST", "/category", h, string.format(
            '{"categories":{"c":{"title":"%s"}}}', text))
      else
         error("unknown mode " .. mode)
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
