import fc from 'fast-check';
import { DateTime } from 'luxon';
import { isLive, localDateOf, oracleSlots } from '../helpers/availability-oracle.ts';
import { queryArb } from './availability-arbitraries.ts';

const MIN = 60000;
const counts: Record<string, number> = {};
const inc = (k: string) => {
  counts[k] = (counts[k] ?? 0) + 1;
};
const N = 400;
for (const q of fc.sample(queryArb, { numRuns: N, seed: 42 })) {
  const slots = oracleSlots(q);
  if (slots.length) inc('nonempty');
  const offs = new Set<number>();
  for (const s of slots) offs.add(DateTime.fromMillis(s.startsAt, { zone: q.timezone }).offset);
  if (offs.size > 1) inc('slots under two offsets');
  // slot on a day whose length != 24h
  for (const s of slots) {
    const d = localDateOf(s.startsAt, q.timezone);
    const st = DateTime.fromISO(d, { zone: q.timezone }).startOf('day');
    const len = st.plus({ days: 1 }).startOf('day').toMillis() - st.toMillis();
    if (len !== 86400000) {
      inc('slot on DST day');
      break;
    }
  }
  // any-staff with >1 free members at some start
  let multi = false,
    nonFirst = false;
  for (const s of slots) {
    const free = q.staff.filter((st) =>
      oracleSlots({ ...q, staff: [st] }).some((x) => x.startsAt === s.startsAt),
    );
    if (free.length > 1) {
      multi = true;
      if (s.staffId !== free[0]!.id) nonFirst = true;
    }
  }
  if (multi) inc('multi free');
  if (nonFirst) inc('chosen not first listed');
  if (slots.some((s) => s.startsAt === q.now + q.minNoticeMinutes * MIN)) inc('slot exactly at notice');
  if (
    slots.some((s) =>
      q.staff.some((st) =>
        st.bookings.some(
          (b) =>
            isLive(b.holdExpiresAt, q.now) &&
            (b.blockedUntil === s.startsAt ||
              b.startsAt === s.endsAt + q.services.at(-1)!.bufferAfterMinutes * MIN),
        ),
      ),
    )
  )
    inc('slot touching booking');
  if (
    slots.some((s) =>
      q.staff.some((st) =>
        st.bookings.some(
          (b) => !isLive(b.holdExpiresAt, q.now) && b.startsAt < s.endsAt && s.startsAt < b.blockedUntil,
        ),
      ),
    )
  )
    inc('slot over lapsed hold');
  const last = slots.at(-1);
  if (last && q.closedDates.size) inc('closed+slots');
}
console.log(N, counts);
