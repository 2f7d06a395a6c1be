import { afterAll, beforeAll, expect, it } from 'vitest';
import { customerLinks } from '../../src/app/customer-links.ts';
import { deliverAllDue, type OutboxDelivery, sendersFor } from '../../src/app/outbox-delivery.ts';
import { localCheckout } from '../../src/app/payments.ts';
import { smsSegments } from '../../src/domain/outbox.ts';
import { catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTwilioStandIn, type TwilioStandIn } from '../helpers/message-sinks.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Names as salons type them (a word processor's apostrophe "’", a dash "–", Irish and Welsh accents
 * the SMS alphabet lacks: "á", "â") are written in the SMS alphabet in texts ("'", "-", "a"), as the
 * dates already are: one such character made the whole SMS UCS-2 (67 characters a part instead of
 * 153), and to stay within two parts the stylist, the salon's phone went and the names were cut to a
 * few letters ("Chl...: Booked: Men... at Soh..."). Sent through the twilio package to the stand-in.
 */
let t: TestApp;
let twilio: TwilioStandIn;
let delivery: OutboxDelivery;

beforeAll(async () => {
  const catalogue = smallCatalogue();
  catalogue.organisation.name = 'Chloë’s Hair';
  catalogue.locations[0]!.name = 'Soho – Dean St';
  const cut = catalogue.services.find((s) => s.ref === 'cut')!;
  cut.name = 'Men’s cut';
  for (const member of catalogue.staff) member.name = { ana: 'Seán', bo: 'Siân', cy: 'Zoë' }[member.ref]!;
  t = await startTestApp({ catalogues: [catalogue], now: '2026-11-23T09:00:00Z' });
  await t.database.db.updateTable('locations').set({ reminder_hours_before: 0 }).execute();
  twilio = await startTwilioStandIn();
  delivery = {
    db: t.database.db,
    clock: t.clock,
    senders: await sendersFor({
      email: null,
      sms: {
        accountSid: twilio.accountSid,
        authToken: twilio.authToken,
        from: '+447700900000',
        apiBase: twilio.base,
      },
    }),
    links: customerLinks(localCheckout, 'https://book.example'),
  };
});
afterAll(async () => {
  await twilio?.close();
  await t?.close();
});

it('texts typographic names in the SMS alphabet, keeping the stylist, the phone and whole names', async () => {
  const ids = await catalogueIds(t.database.db);
  const client = await t.request({
    method: 'POST',
    url: '/v1/clients',
    payload: { first_name: 'Sam', last_name: 'Lee', phone: '+447911123457' },
  });
  expect(client.statusCode, client.body).toBe(201);
  const booked = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services.cut],
    staff_id: ids.staff.ana,
    client_id: client.json().data.id,
    starts_at: '2026-11-24T10:00:00+00:00',
  });
  expect(booked.statusCode, booked.body).toBe(201);
  await deliverAllDue(delivery);
  const sms = twilio.requests.at(-1)!.body;
  expect(sms).toMatch(
    /^Chloe's Hair: Booked: Men's cut with Sean on Tuesday 24 November at 10:00 GMT, at Soho - Dean St\. /,
  );
  expect(sms).toContain('Questions or changes: +442071234567');
  expect(sms).toContain(`Ref ${booked.json().data.reference}.`);
  expect(smsSegments(sms)).toBeLessThanOrEqual(2);
  // Every character in the SMS alphabet: the same text counted as GSM-7 (at most 306) fits.
  expect(sms.length).toBeGreaterThan(2 * 67);
});
