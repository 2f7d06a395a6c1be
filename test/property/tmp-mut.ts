import fc from 'fast-check';
import { findSlots } from '../../src/domain/availability/find-slots.ts';
import { oracleSlots } from './tmp-oracle.ts';
import { queryArbitrary } from './availability-arbitraries.ts';
for (const dst of [false, true]) {
  const r = fc.check(fc.property(queryArbitrary(dst), (q) => {
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    return same(findSlots(q), oracleSlots(q)) && q.staff.every((s) => same(findSlots({ ...q, staff: [s] }), oracleSlots({ ...q, staff: [s] })));
  }), { numRuns: 150 });
  console.log(dst ? 'dst' : 'any', r.failed ? `CAUGHT after ${r.numRuns}` : 'missed');
}
