import { afterEach, describe, expect, it } from 'vitest';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TUESDAY } from '../helpers/waitlist-fixtures.ts';

/**
 * POST /v1/waitlist naming a staff member who cannot be waited for: the refusal says why, so the
 * caller changes what is wrong. The small catalogue: Cy does Cuts at Soho but is not active; Bo does
 * Cuts, not colours.
 */
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

describe('joining the waitlist with a staff member', () => {
  it('says one not on the active staff there is not, rather than that they do not do the services', async () => {
    t = await startTestApp({ now: '2026-11-23T09:00:00Z' });
    const ids = await catalogueIds(t.database.db);
    const join = async (staffId: string, serviceId: string) => {
      const answer = await t.request({
        method: 'POST',
        url: '/v1/waitlist',
        payload: {
          location_slug: 'soho',
          service_ids: [serviceId],
          staff_id: staffId,
          client_id: ids.jo,
          from_date: TUESDAY,
          to_date: TUESDAY,
        },
      });
      expect(answer.statusCode, answer.body).toBe(400);
      return JSON.parse(answer.body).error;
    };
    const notHere = {
      code: 'invalid_request',
      param: 'staff_id',
      message: 'This staff member does not work at this location, or is not active.',
    };
    // Cy does Cuts at Soho, but is no longer active.
    expect(await join(ids.staff.cy!, ids.services.cut!)).toEqual(notHere);
    // An id no staff member of the organisation has.
    expect(await join('3bfb2d49-4b43-512b-ab21-fcee7c1755e2', ids.services.cut!)).toEqual(notHere);
    // Bo works at Soho, and does Cuts only.
    expect(await join(ids.staff.bo!, ids.services.colour!)).toEqual({
      code: 'invalid_request',
      param: 'staff_id',
      message: 'This staff member does not do all of these services at this location.',
    });
  });
});
