-- wrk script for bench/serve-vs-thumbor.py, scenario "uncached": every request is a new cache key.
-- Arguments (after wrk's "--"): BASE THREADS H0 TEMPLATE SRC...  (THREADS = wrk's -t)
--   TEMPLATE is the server's URL path with {src} and {h} in it; request number n (counted from BASE)
--   asks for SRC[n mod #SRC] fitted inside 256 x (H0 + floor(n / #SRC)): for 4:3 landscape sources
--   and H0 >= 192 that is the same 256-px-wide image under a new URL every time (the pair photo, height
--   is unique per n). Thread i (numbered in setup) takes n = BASE + i, BASE + i + T,
--   BASE + i + 2T, ... for T threads, so threads never repeat each other's numbers.
-- Counts 2xx and other statuses per thread and prints them with wrk-report.lua's report().

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "wrk-report.lua")

local threads = {}

function setup(thread)
   thread:set("tid", #threads)
   table.insert(threads, thread)
end

function init(args)
   base = tonumber(args[1])
   stride = tonumber(args[2])
   h0 = tonumber(args[3])
   template = args[4]
   srcs = {}
   for i = 5, #args do srcs[#srcs + 1] = args[i] end
   k = 0
   ok = 0
   other = 0
   last_n = -1
end

function request()
   local n = base + tid + k * stride
   k = k + 1
   last_n = n
   local src = srcs[(n % #srcs) + 1]
   local path = template:gsub("{src}", function() return src end)
                        :gsub("{h}", function() return tostring(h0 + math.floor(n / #srcs)) end)
   return wrk.format("GET", path)
end

function response(status, headers, body)
   if status >= 200 and status < 300 then ok = ok + 1 else other = other + 1 end
end

function done(summary, latency, requests)
   local ok_total, other_total, max_n = 0, 0, -1
   for _, t in ipairs(threads) do
      ok_total = ok_total + t:get("ok")
      other_total = other_total + t:get("other")
      max_n = math.max(max_n, t:get("last_n"))
   end
   report(summary, latency, {status_2xx = ok_total, status_other = other_total, max_n = max_n})
end
