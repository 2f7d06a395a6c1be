import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { formKey } from '../../src/app/public-booking.ts';
import { checkIntegrity } from '../../src/data/integrity-check.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { pagePathOf, pagePost } from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * `booking check` on a database where customers booked on the public page: the form's key keeps a
 * record of what it made (the booking's page token, so that the form sent again leads there), which
 * is no booking response and must not be read as one. Monday 23 November 2026, 09:00 in London.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ catalogues: [demoCatalogue()], now: '2026-11-23T09:00:00Z' });
});
afterAll(async () => {
  await t?.close();
});

it("passes with public bookings made from forms, and reports a form's record whose booking page is gone", async () => {
  const ids = await catalogueIds(t.database.db);
  const form = {
    location: 'camden',
    services: ids.services.cut!,
    starts_at: '2026-11-24T15:00:00Z',
    first_name: 'Rosa',
    last_name: 'Parks',
    phone: '07911 223302',
    form_key: formKey(),
  };
  const page = pagePathOf(await pagePost(t, '/p/northside-hair/book', form));
  // The same form sent again leads to the same page: its record is what the check reads.
  expect(pagePathOf(await pagePost(t, '/p/northside-hair/book', form))).toBe(page);
  const report = await checkIntegrity(t.database.db, t.clock.nowMs());
  expect(report.findings.filter((finding) => finding.violations > 0)).toEqual([]);
  expect(report.bookings).toBe(1);

  const trx = await t.database.db.startTransaction().execute();
  try {
    await sql`DELETE FROM booking_pages`.execute(trx);
    const broken = await checkIntegrity(trx, t.clock.nowMs());
    expect(broken.findings.filter((finding) => finding.violations > 0)).toEqual([
      expect.objectContaining({
        check: 'idempotency_records',
        examples: ["a booking form's stored response names a missing booking page"],
      }),
    ]);
  } finally {
    await trx.rollback().execute();
  }
});
