import autocannon from 'autocannon';
import { startServerProcess } from './lib/server-process.ts';
import type { AvailabilityStackInfo } from './availability-endpoint-server.ts';
const s = await startServerProcess<AvailabilityStackInfo>(new URL('./availability-endpoint-server.ts', import.meta.url), null, { cpuProfileDir: process.env.PROF });
const url = `${s.info.origin}/v1/locations/shoreditch/availability?service_ids=${s.info.serviceIds.join(',')}&date=2027-01-11&days=14`;
const headers = { authorization: `Bearer ${s.info.readKey}` };
const r = await fetch(url, { headers }); const text = await r.text(); console.log(r.status, text.length, text.slice(0, 400));
for (let i = 0; i < 2; i++) {
  const res = await autocannon({ url, headers, connections: 50, duration: 5 });
  console.log(res.requests.average, res.latency.p50, res.latency.p99, res.non2xx);
}
await s.stop();
