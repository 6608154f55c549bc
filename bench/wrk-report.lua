-- wrk script for bench/serve-vs-thumbor.py: requests the command line's URL as is (wrk's fast static
-- request path) and, when done, prints one line "WRK_JSON {...}" with the totals, socket errors and the
-- latency distribution in microseconds. bench/wrk-uncached.lua loads this file for report().

function report(summary, latency, extra)
   local e = summary.errors
   local parts = {
      string.format('"duration_us":%d', summary.duration),
      string.format('"requests":%d', summary.requests),
      string.format('"bytes":%d', summary.bytes),
      string.format('"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}',
                    e.connect, e.read, e.write, e.status, e.timeout),
      string.format('"latency_us":{"min":%d,"mean":%.1f,"max":%d,"stdev":%.1f,"p50":%d,"p90":%d,"p99":%d,"p99_9":%d}',
                    latency.min, latency.mean, latency.max, latency.stdev,
                    latency:percentile(50), latency:percentile(90), latency:percentile(99),
                    latency:percentile(99.9)),
   }
   for k, v in pairs(extra or {}) do
      table.insert(parts, string.format('"%s":%d', k, v))
   end
   io.write("WRK_JSON {" .. table.concat(parts, ",") .. "}\n")
end

function done(summary, latency, requests)
   report(summary, latency, nil)
end
