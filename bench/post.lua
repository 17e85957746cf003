-- wrk script: POST the body in BENCH_BODY_FILE with the headers the harness sets, and print
-- the results as one JSON line so run.mjs can read them.
local f = assert(io.open(os.getenv("BENCH_BODY_FILE"), "rb"))
wrk.body = f:read("*a")
f:close()
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local key = os.getenv("BENCH_API_KEY")
if key and #key > 0 then wrk.headers["Authorization"] = "Bearer " .. key end
-- More headers, one "name: value" a line (a peer gateway's routing headers).
for line in string.gmatch(os.getenv("BENCH_HEADERS") or "", "[^\n]+") do
  local name, value = line:match("^([^:]+):%s*(.*)$")
  if name then wrk.headers[name] = value end
end

function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"errors":%d,"non2xx":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, errors, summary.errors.status,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean))
end
