import { findSlots } from '../src/domain/availability/find-slots.ts';
import { oracleSlots } from '../test/helpers/availability-oracle.ts';
import { AVAILABILITY_SCENARIO as S, createAvailabilityDatabase } from './lib/availability-database.ts';
import { loadAvailabilityQuery } from './lib/availability-query.ts';
const t0 = performance.now();
const d = await createAvailabilityDatabase();
console.log('seed ms', performance.now() - t0, d.bookings);
const q = await loadAvailabilityQuery(d.database.db, d.organisationId, { locationSlug: S.location, serviceIds: d.serviceIds, fromDate: S.fromDate, days: S.days }, d.now);
console.log('staff', q.staff.length, 'bookings', q.staff.reduce((n, s) => n + s.bookings.length, 0), 'timeoff', q.staff.reduce((n, s) => n + s.timeOff.length, 0));
const slots = findSlots(q);
console.log('slots', slots.length);
const perDay = new Map<string, number>();
for (const s of slots) { const k = new Date(s.startsAt).toISOString().slice(0, 10); perDay.set(k, (perDay.get(k) ?? 0) + 1); }
console.log([...perDay]);
for (let i = 0; i < 500; i++) findSlots(q);
const ts: number[] = [];
for (let i = 0; i < 2000; i++) { const a = performance.now(); findSlots(q); ts.push(performance.now() - a); }
ts.sort((a, b) => a - b);
console.log('p50', ts[1000], 'p99', ts[1980]);
let o = performance.now(); const os = oracleSlots(q); console.log('oracle cold', performance.now() - o, os.length, JSON.stringify(os) === JSON.stringify(slots));
o = performance.now(); oracleSlots(q); console.log('oracle warm', performance.now() - o);
await d.database.dispose();
