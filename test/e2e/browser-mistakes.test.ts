import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { launchBrowser, openPhonePage } from '../helpers/browser.ts';
import { type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';
import { deliveredCode, messagesOf } from '../helpers/public-booking.ts';

/**
 * What a customer on a phone (Debian's Chromium, 360 x 740) sees when something goes wrong, against
 * the demo catalogue on a real port: a field the page refuses is said beside that field, marked
 * invalid, and focused, so the keyboard and a screen reader land on what to put right; a move
 * confirmed twice (Back to its page, or a second tab) moves the booking and tells the customer once;
 * at the desk (1280 x 800), a change another desk made first leaves the second on the booking as it
 * now is, saying why nothing was done.
 */
let browser: Browser;
let server: ListeningApp;

beforeAll(async () => {
  browser = await launchBrowser();
  server = await startListeningApp();
  for (const email of DESKS) {
    await createUser(
      server.t.database.db,
      { organisationSlug: ORG, email, role: 'staff', password: PASSWORD },
      server.t.clock.nowMs(),
    );
  }
}, 10 * 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.t.close();
});

const ORG = 'northside-hair';
const PASSWORD = 'front desk password';
/** Two receptionists at two desks. */
const DESKS = ['desk@northside.test', 'desk2@northside.test'] as const;

let phoneSeq = 0;
/** A phone number of its own per booking (the caps count bookings per phone). */
const nextPhone = () => `07400 3${String(++phoneSeq).padStart(5, '0')}`;

/** Camden's cut, on the first day with times from next week (the day strip's later week). */
async function chooseAWeekOut(page: Page): Promise<void> {
  await page.goto(`${server.origin}/p/${ORG}?location=camden`);
  await page.getByLabel(/^Cut & blow-dry/).check();
  await page.getByRole('button', { name: 'Show free times' }).click();
  await page.getByRole('navigation', { name: 'Days' }).getByRole('button', { name: 'Later days' }).click();
  await page.locator('nav.strip li button:not(.none)').first().click();
  await page.getByRole('radio').first().waitFor();
}

/** Books the first time of a week out with a phone of its own; the booking's reference. */
async function bookAWeekOut(page: Page): Promise<string> {
  await chooseAWeekOut(page);
  await page.getByRole('radio').first().check();
  await page.getByLabel('First name').fill('Rosa');
  await page.getByLabel('Last name').fill('Parks');
  await page.getByLabel('Phone').fill(nextPhone());
  await page.getByRole('button', { name: 'Confirm booking' }).click();
  await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
  const reference = /NHC-[0-9A-Z]{6}/.exec((await page.textContent('body')) ?? '')![0];
  await page.getByLabel('Code').fill((await deliveredCode(server.t, reference)).code);
  await page.getByRole('button', { name: 'Confirm booking' }).click();
  await page.getByRole('heading', { name: 'Booking confirmed' }).waitFor();
  return reference;
}

/**
 * The field is marked invalid, has the focus, and its accessible description is the refusal, which
 * sits right above it (not only at the top of a long page, out of sight on a phone).
 */
async function refusedBeside(page: Page, label: string | RegExp, words: string): Promise<void> {
  const field = page.getByLabel(label, { exact: typeof label === 'string' });
  expect(await field.getAttribute('aria-invalid')).toBe('true');
  expect(await page.evaluate('document.activeElement.id')).toBe(await field.getAttribute('id'));
  const id = (await field.getAttribute('aria-describedby')) ?? '';
  const message = page.locator(`[id="${id}"]`);
  expect(await message.textContent()).toContain(words);
  expect(await message.getAttribute('role')).toBe('alert');
  const above = (await message.boundingBox())!;
  const input = (await field.boundingBox())!;
  expect(input.y - (above.y + above.height)).toBeGreaterThanOrEqual(0);
  expect(input.y - (above.y + above.height)).toBeLessThan(40);
  // On screen once the page opens: the phone scrolled to it.
  expect(input.y + input.height).toBeLessThanOrEqual(740);
  expect(above.y).toBeGreaterThanOrEqual(0);
}

describe('a refused field on the customer pages', () => {
  it('is said beside the field, marked invalid and focused: the booking form, and the code (Back and Reload send none again)', async () => {
    const page = await openPhonePage(browser);
    await chooseAWeekOut(page);
    await page.getByRole('radio').first().check();
    await page.getByLabel('First name').fill('Rosa');
    await page.getByLabel('Last name').fill('Parks');
    await page.getByLabel('Phone').fill('0900 123 456');
    await page.getByRole('button', { name: 'Confirm booking' }).click();
    await page.getByRole('heading', { name: 'Book at Northside Hair Co.' }).waitFor();
    await refusedBeside(page, 'Phone', 'That phone number does not look right.');
    // Said once, as an alert: beside the field, not again at the top.
    expect(await page.getByRole('alert').count()).toBe(1);

    // Put right: on to the code, entered wrongly first.
    await page.getByLabel('Phone').fill(nextPhone());
    await page.getByRole('button', { name: 'Confirm booking' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await page.getByLabel('Code').fill('000000');
    await page.getByRole('button', { name: 'Confirm booking' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await refusedBeside(page, 'Code', 'That code is not right.');
    const reference = /NHC-[0-9A-Z]{6}/.exec((await page.textContent('body')) ?? '')![0];
    // Wrong twice, then Back and Reload: pages read again (Post/Redirect/Get), no code sent again.
    await page.getByLabel('Code').fill('000001');
    await page.getByRole('button', { name: 'Confirm booking' }).click();
    await page.getByText('3 tries are left').waitFor();
    await page.goBack();
    await page.reload();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await refusedBeside(page, 'Code', '3 tries are left for this code.');
    const proof = await server.t.database.db
      .selectFrom('contact_proofs')
      .innerJoin('bookings', 'bookings.id', 'contact_proofs.booking_id')
      .select('contact_proofs.tries')
      .where('bookings.reference', '=', reference)
      .executeTakeFirstOrThrow();
    expect(proof.tries).toBe(2);
    await page.getByLabel('Code').fill((await deliveredCode(server.t, reference)).code);
    await page.getByRole('button', { name: 'Confirm booking' }).click();
    await page.getByRole('heading', { name: 'Booking confirmed' }).waitFor();
    // A page with nothing refused marks and focuses nothing.
    expect(await page.locator('[aria-invalid]').count()).toBe(0);
  }, 120_000);

  it('is said beside the repeat fields when the series is what is refused, the rest kept', async () => {
    const page = await openPhonePage(browser);
    await chooseAWeekOut(page);
    await page.getByRole('radio').first().check();
    await page.getByLabel('First name').fill('Rosa');
    await page.getByLabel('Last name').fill('Parks');
    await page.getByLabel('Phone').fill(nextPhone());
    // Every week, with the number of visits left empty (the field is not required: a form sends it).
    await page.getByLabel('Repeat', { exact: true }).selectOption({ label: 'Every week' });
    await page.getByLabel(/^Visits in all/).fill('');
    await page.getByRole('button', { name: 'Confirm booking' }).click();
    await page.getByRole('heading', { name: 'Book at Northside Hair Co.' }).waitFor();
    // In the words of the field's own label: the range the page books.
    expect(await page.getByText(/^Visits in all/).textContent()).toContain('(2 to 6)');
    await refusedBeside(page, /^Visits in all/, 'Online, a series has 2 to 6 visits.');
    expect(await page.getByRole('alert').count()).toBe(1);
    // The rest as it was: the time, the details and the repeat chosen.
    expect(await page.getByLabel('Repeat', { exact: true }).inputValue()).toBe('1');
    expect(await page.getByLabel('First name').inputValue()).toBe('Rosa');
    expect(await page.getByRole('radio', { checked: true }).count()).toBe(1);
  }, 120_000);

  it('is said beside the field on the waitlist form', async () => {
    const page = await openPhonePage(browser);
    await page.goto(`${server.origin}/p/${ORG}?location=camden`);
    await page.getByLabel(/^Cut & blow-dry/).check();
    await page.getByRole('button', { name: 'Show free times' }).click();
    // Nobody works at Camden on Sundays: the strip's day with none is offered the waitlist.
    await page.locator('nav.strip li button.none').first().click();
    await page.getByRole('heading', { name: 'Tell me if a time frees up' }).waitFor();
    await page.getByLabel('First name').fill('Rosa');
    await page.getByLabel('Last name').fill('Parks');
    await page.getByLabel('Phone').fill('0900 123 456');
    await page.getByRole('button', { name: 'Tell me if a time frees up' }).click();
    await page.getByRole('heading', { name: 'Tell me if a time frees up', level: 1 }).waitFor();
    await refusedBeside(page, 'Phone', 'That phone number does not look right.');
  }, 120_000);
});

describe('a move confirmed twice', () => {
  it('moves the booking once: Back shows it is already there, a second tab lands on the booking', async () => {
    const page = await openPhonePage(browser);
    const reference = await bookAWeekOut(page);
    const bookingUrl = page.url();
    await page.getByRole('link', { name: 'Change the time' }).click();
    await page.getByRole('radio').nth(2).check();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Yes, move it' }).waitFor();
    // The same confirmation open in a second tab.
    const second = await page.context().newPage();
    await second.goto(page.url());
    await page.getByRole('button', { name: 'Yes, move it' }).click();
    await page.getByRole('heading', { name: 'Booking confirmed' }).waitFor();
    expect(await page.getByText(/^Moved: you are now booked for /).count()).toBe(1);
    const moved = await page.locator('dl').textContent();

    // Back to the confirmation: it says the booking is there already, and offers no move.
    await page.goBack();
    await page.getByRole('heading', { name: 'Move your booking' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('Your booking is already at this time.');
    expect(await page.getByRole('button', { name: 'Yes, move it' }).count()).toBe(0);

    // The second tab's Yes: the booking's page, as it is, and no second message or event.
    await second.getByRole('button', { name: 'Yes, move it' }).click();
    await second.getByRole('heading', { name: 'Booking confirmed' }).waitFor();
    expect(second.url()).toBe(`${bookingUrl}?moved=1`);
    expect(await second.locator('dl').textContent()).toBe(moved);
    const told = (await messagesOf(server.t, reference)).filter((m) => m.kind === 'rescheduled');
    expect(told).toHaveLength(1);
    const events = await server.t.database.db
      .selectFrom('booking_events')
      .innerJoin('bookings', 'bookings.id', 'booking_events.booking_id')
      .select('booking_events.details')
      .where('bookings.reference', '=', reference)
      .execute();
    expect(events.filter((e) => String(e.details).includes('rescheduled'))).toHaveLength(1);
  }, 120_000);
});

/** A desk's console, signed in, in a browser context of its own (a desktop's screen unless told). */
async function desk(email: string, viewport = { width: 1280, height: 800 }): Promise<Page> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(`${server.origin}/console`);
  await page.getByLabel('Organisation').fill(ORG);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/console\/diary/);
  return page;
}

describe('two desks at the same booking', () => {
  it('the second to cancel lands on the booking as it now is, told why nothing was done', async () => {
    const reference = await bookAWeekOut(await openPhonePage(browser));
    const [first, second] = [await desk(DESKS[0]), await desk(DESKS[1])];
    for (const page of [first, second]) {
      await page.goto(`${server.origin}/console/bookings/${reference}`);
      await page.getByRole('link', { name: 'Cancel…' }).click();
    }
    await first.getByLabel('Reason (optional)').fill('client phoned');
    await first.getByRole('button', { name: 'Cancel the booking' }).click();
    await first.getByRole('heading', { name: `Booking ${reference}: Cancelled` }).waitFor();

    const answer = second.waitForResponse((r) => r.request().method() === 'POST');
    await second.getByRole('button', { name: 'Cancel the booking' }).click();
    expect((await answer).status()).toBe(409);
    await second.getByRole('heading', { name: `Booking ${reference}: Cancelled` }).waitFor();
    expect(await second.getByRole('alert').textContent()).toContain(
      'Not done. This booking cannot be cancelled',
    );
    // Still in the console (its navigation), with the event log saying who cancelled it.
    await second.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Diary' }).waitFor();
    expect(await second.locator('table').last().textContent()).toContain(DESKS[0]);
    expect(await second.getByRole('link', { name: 'Cancel…' }).count()).toBe(0);
  }, 120_000);
});

describe('moving a booking at the desk', () => {
  it('offers no move to where it already is, and a move confirmed twice moves it once', async () => {
    const reference = await bookAWeekOut(await openPhonePage(browser));
    const response = await fetch(`${server.origin}/v1/bookings/${reference}`, {
      headers: { authorization: `Bearer ${server.t.keys.readWrite}` },
    });
    const booking = ((await response.json()) as { data: { starts_at: string; staff_id: string } }).data;
    const staff = await server.t.database.db
      .selectFrom('staff')
      .select('name')
      .where('id', '=', booking.staff_id)
      .executeTakeFirstOrThrow();
    const time = new Intl.DateTimeFormat('en-GB', { timeStyle: 'short', timeZone: 'Europe/London' }).format(
      Date.parse(booking.starts_at),
    );

    const page = await desk(DESKS[0]);
    await page.goto(`${server.origin}/console/bookings/${reference}/reschedule`);
    const times = page.getByRole('group', { name: 'Free times' });
    await times.waitFor();
    expect(await times.getByRole('button', { name: `${time} with ${staff.name}`, exact: true }).count()).toBe(
      0,
    );

    // The same list open in a second tab; the same new time chosen in both.
    const second = await page.context().newPage();
    await second.goto(page.url());
    const choice = (await times.getByRole('button').nth(3).textContent())!;
    await times.getByRole('button', { name: choice, exact: true }).click();
    await page.getByRole('heading', { name: `Booking ${reference}: Confirmed` }).waitFor();
    await second
      .getByRole('group', { name: 'Free times' })
      .getByRole('button', { name: choice, exact: true })
      .click();
    await second.getByRole('heading', { name: `Booking ${reference}: Confirmed` }).waitFor();
    const told = (await messagesOf(server.t, reference)).filter((m) => m.kind === 'rescheduled');
    expect(told).toHaveLength(1);
    expect(await second.locator('table').last().textContent()).not.toMatch(/Moved from (.+) to \1/);
  }, 120_000);
});

describe('a visitor in another time zone', () => {
  it('reads every time on the booking’s page, and a move’s, with the clock it is on', async () => {
    const context = await browser.newContext({
      viewport: { width: 360, height: 740 },
      deviceScaleFactor: 1,
      timezoneId: 'America/New_York',
    });
    const page = await context.newPage();
    await bookAWeekOut(page);
    const appointment = page
      .locator('dt', { hasText: 'Appointment' })
      .locator('xpath=following-sibling::dd[1]');
    expect(await appointment.textContent()).toMatch(/\d{2}:\d{2} London time$/);
    // Moving it: the current time and the new one, each with its clock.
    await page.getByRole('link', { name: 'Change the time' }).click();
    await page.getByRole('radio').nth(1).check();
    await page.getByRole('button', { name: 'Continue' }).click();
    expect(await page.locator('main p', { hasText: /^From / }).textContent()).toMatch(
      /^From .+ \d{2}:\d{2} London time to .+ \d{2}:\d{2} London time\.$/,
    );
    await context.close();
  }, 120_000);
});

describe('the browser’s own console at the desk', () => {
  it('logs no error on the console’s pages (a missing icon, a blocked load)', async () => {
    const reference = await bookAWeekOut(await openPhonePage(browser));
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const logged: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') logged.push(message.text());
    });
    page.on('pageerror', (error) => logged.push(error.message));
    await page.goto(`${server.origin}/console`);
    await page.getByLabel('Organisation').fill(ORG);
    await page.getByLabel('E-mail').fill(DESKS[0]);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/diary/);
    await page.goto(`${server.origin}/console/bookings/${reference}`);
    await page.getByRole('heading', { name: `Booking ${reference}: Confirmed` }).waitFor();
    // The tab's icon, asked for once the page has loaded.
    await page.waitForLoadState('networkidle');
    expect(logged).toEqual([]);
    await context.close();
  }, 120_000);
});

describe('the console on a phone', () => {
  it('shows a booking’s page, its messages and event log, without sideways scrolling', async () => {
    const reference = await bookAWeekOut(await openPhonePage(browser));
    const page = await desk(DESKS[1], { width: 360, height: 740 });
    await page.goto(`${server.origin}/console/bookings/${reference}`);
    await page.getByRole('heading', { name: 'Event log' }).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
  }, 120_000);
});

describe('booking a caller at the desk', () => {
  /** The desk's booking form for a cut at Camden a week out, its first free time chosen, a caller's details typed. */
  async function fillBooking(page: Page, phone: string): Promise<void> {
    const day = new Date(server.t.clock.nowMs() + 7 * 86_400_000).toISOString().slice(0, 10);
    await page.goto(`${server.origin}/console/book?location=camden&date=${day}`);
    await page.getByLabel('Services').selectOption({ label: 'Cut & blow-dry (60 min, £55.00)' });
    await page.getByRole('button', { name: 'Show free times' }).click();
    // The first day from then with a free time (nobody works at Camden on Sundays).
    while ((await page.getByLabel('Free time').count()) === 0) {
      const next = new Date(
        Date.parse(`${await page.getByLabel('Day').inputValue()}T12:00:00Z`) + 86_400_000,
      );
      await page.getByLabel('Day').fill(next.toISOString().slice(0, 10));
      await page.getByRole('button', { name: 'Show free times' }).click();
    }
    await page.getByLabel('Free time').selectOption({ index: 1 });
    await page.getByLabel('First name').fill('Walk');
    await page.getByLabel('Last name').fill('In');
    await page.getByLabel('Phone').fill(phone);
    await page.getByLabel('Notes').fill('prefers a quiet chair');
  }

  it('sends a refused form back filled in, the refusal beside its field', async () => {
    const page = await desk(DESKS[0]);
    await fillBooking(page, '0900 123 456');
    const time = await page.getByLabel('Free time').inputValue();
    await page.getByRole('button', { name: 'Book', exact: true }).click();
    await page.getByRole('heading', { name: 'Book an appointment' }).waitFor();
    await refusedBeside(page, 'Phone', 'That phone number does not look right.');
    expect(await page.getByLabel('First name').inputValue()).toBe('Walk');
    expect(await page.getByLabel('Notes').inputValue()).toBe('prefers a quiet chair');
    expect(await page.getByLabel('Free time').inputValue()).toBe(time);
    // Put right, it books.
    await page.getByLabel('Phone').fill(nextPhone());
    await page.getByRole('button', { name: 'Book', exact: true }).click();
    await page.getByRole('heading', { name: /^Booking [A-Z]+-[0-9A-Z]{6}: Confirmed$/ }).waitFor();
  }, 120_000);

  it('says a refused repeat beside its field, marked invalid and focused, the rest kept', async () => {
    const page = await desk(DESKS[0]);
    await fillBooking(page, nextPhone());
    const time = await page.getByLabel('Free time').inputValue();
    // Every 2 weeks, with the number of visits left empty (the field is not required: a form sends it).
    await page.getByLabel('Repeat', { exact: true }).selectOption({ label: 'Every 2 weeks' });
    await page.getByLabel(/^Visits in all/).fill('');
    await page.getByRole('button', { name: 'Book', exact: true }).click();
    await page.getByRole('heading', { name: 'Book an appointment' }).waitFor();
    expect(await page.getByText(/^Visits in all/).textContent()).toContain('(2 to 26)');
    await refusedBeside(page, /^Visits in all/, 'A series has 2 to 26 visits.');
    // Said once, in the console's own style for a refusal, not again at the top of the form.
    expect(await page.getByRole('alert').count()).toBe(1);
    expect(await page.getByRole('alert').getAttribute('class')).toBe('error');
    // The rest as it was: the repeat chosen, the time and the caller's details.
    expect(await page.getByLabel('Repeat', { exact: true }).inputValue()).toBe('2');
    expect(await page.getByLabel('Free time').inputValue()).toBe(time);
    expect(await page.getByLabel('First name').inputValue()).toBe('Walk');
    // Nothing was booked (the day's times are left for the tests after this one).
    expect(await page.getByLabel('Free time').locator('option').count()).toBeGreaterThan(1);
  }, 120_000);

  it('books a caller once when the same form is sent from two tabs', async () => {
    const page = await desk(DESKS[1]);
    const second = await page.context().newPage();
    const phone = nextPhone();
    await fillBooking(page, phone);
    await fillBooking(second, phone);
    await page.getByRole('button', { name: 'Book', exact: true }).click();
    await page.getByRole('heading', { name: /: Confirmed$/ }).waitFor();
    const booked = page.url();
    await second.getByRole('button', { name: 'Book', exact: true }).click();
    await second.getByRole('heading', { name: /: Confirmed$/ }).waitFor();
    expect(second.url().split('?')[0]).toBe(booked.split('?')[0]);
    expect(await second.getByRole('status').textContent()).toContain('Already booked at that time');
  }, 120_000);
});

describe('a day with no times for the services chosen', () => {
  it('is not called closed when the salon is open and only nobody who does them works', async () => {
    const page = await openPhonePage(browser);
    await page.goto(`${server.origin}/p/${ORG}?location=camden`);
    // Ben Carter alone trims beards, and he is not at Camden on Mondays; Camden is open then.
    await page.getByLabel(/^Beard trim/).check();
    await page.getByRole('button', { name: 'Show free times' }).click();
    const strip = page.getByRole('navigation', { name: 'Days' });
    await strip.getByRole('button', { name: 'Later days' }).click();
    await strip.getByRole('button', { name: /^Mon \d+/ }).click();
    const said = (await page.getByRole('status').textContent()) ?? '';
    expect(said).toContain('No free times that day. Nobody who does Beard trim works that day');
    expect(said).not.toContain('Closed');
    // Sunday, when nobody at Camden works, is closed.
    await strip.getByRole('button', { name: /^Sun \d+/ }).click();
    expect(await page.getByRole('status').textContent()).toContain('Closed that day.');
  }, 120_000);
});
