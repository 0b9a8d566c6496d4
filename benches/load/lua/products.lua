-- GET /product with `ids_per_request` random productIds of a random merchant (scenarios 2, a, b-read, c).
-- args: DATAFILE IDS_PER_REQUEST [STORE_ID_OR_-]
-- DATAFILE lines: TOKEN <tab> ID,ID,... (one line a merchant; one line = one-merchant test)
-- Requests are pre-formatted into a pool in init() so wrk's Lua cost per request stays tiny.
local C = dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
setup = C.setup

local pool = {}

function init(args)
   math.randomseed(os.time() * 1000 + (thread_id or 0) * 7919)
   local n = tonumber(args[2]) or 10
   local store = args[3]
   local merchants = {}
   for _, line in ipairs(C.read_lines(args[1])) do
      local f = C.split(line, "\t")
      merchants[#merchants + 1] = { token = f[1], ids = C.split(f[2], ",") }
   end
   local size = math.max(2000, math.min(20000, #merchants * 10))
   for i = 1, size do
      local m = merchants[math.random(#merchants)]
      local h = C.api_headers(m.token)
      h["productIds"] = C.sample_csv(m.ids, n)
      if store and store ~= "-" then h["storeId"] = store end
      pool[i] = wrk.format("GET", "/product", h)
   end
end

function request()
   return pool[math.random(#pool)]
end
